// A Raising header.
