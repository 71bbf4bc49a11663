// Turns a title into a URL slug: lower-case ASCII letters and digits joined by single hyphens.
export function slugify(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "-")
    .replace(/^-|-$/g, "");
}
