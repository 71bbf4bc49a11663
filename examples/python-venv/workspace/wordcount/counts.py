"""Counts the words of a text, whatever their case."""

from textcase import fold


def count_words(text):
    counts = {}
    for word in text.split(" "):
        key = fold(word)
        counts[key] = counts.get(key, 0) + 1
    return counts
