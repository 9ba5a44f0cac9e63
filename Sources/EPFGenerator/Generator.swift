import EPFFormat
