// Capitalises the first letter of each word of a text; the spaces between words are kept as they are.
export function titleCase(text) {
  return text
    .split(" ")
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join(" ");
}
