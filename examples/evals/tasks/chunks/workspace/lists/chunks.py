"""A list cut into consecutive chunks of `size` items (the last may be shorter)."""


def chunks(items, size):
    return [items[i : i + size] for i in range(0, len(items) - size + 1, size)]
