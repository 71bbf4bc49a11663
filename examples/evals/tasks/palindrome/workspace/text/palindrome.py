"""Whether a phrase reads the same backwards, ignoring case, spaces and punctuation."""


def is_palindrome(text):
    return text == text[::-1]
