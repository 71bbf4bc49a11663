import unittest

from fizz.fizzbuzz import fizzbuzz


class FizzBuzzTest(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(fizzbuzz(7), "7")

    def test_fizz_and_buzz(self):
        self.assertEqual(fizzbuzz(9), "Fizz")
        self.assertEqual(fizzbuzz(10), "Buzz")

    def test_fizzbuzz(self):
        self.assertEqual(fizzbuzz(30), "FizzBuzz")


if __name__ == "__main__":
    unittest.main()
