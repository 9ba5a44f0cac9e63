import EPFQuery
