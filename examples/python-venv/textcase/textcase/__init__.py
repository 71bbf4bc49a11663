"""Case folding for word lists."""


def fold(word):
    return word.casefold()
