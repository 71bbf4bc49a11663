import unittest

from text.palindrome import is_palindrome


class PalindromeTest(unittest.TestCase):
    def test_plain(self):
        self.assertTrue(is_palindrome("level"))
        self.assertFalse(is_palindrome("levels"))

    def test_case(self):
        self.assertTrue(is_palindrome("Level"))

    def test_phrase(self):
        self.assertTrue(is_palindrome("A man, a plan, a canal: Panama"))


if __name__ == "__main__":
    unittest.main()
