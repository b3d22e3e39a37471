NAME x
ROWS
 N obj
 L c
COLUMNS
    x c inf
ENDATA
