import unittest

from wordcount.counts import count_words


class CountWords(unittest.TestCase):
    def test_counts_each_occurrence(self):
        self.assertEqual(count_words("the cat and the hat"), {"the": 2, "cat": 1, "and": 1, "hat": 1})

    def test_ignores_case(self):
        self.assertEqual(count_words("The THE the"), {"the": 3})

    def test_ignores_runs_of_whitespace(self):
        self.assertEqual(count_words("  a  b\n"), {"a": 1, "b": 1})


if __name__ == "__main__":
    unittest.main()
