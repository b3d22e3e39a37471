NAME x
ROWS
 N obj
 L c
COLUMNS
    x d 1
ENDATA
