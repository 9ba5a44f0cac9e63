import EPFStore
