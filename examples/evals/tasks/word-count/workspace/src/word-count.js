// The number of words of a text (words are separated by white space).
export function wordCount(text) {
  return text.split(" ").length;
}
