NAME x
ROWS
 N obj
 L c
 L c
COLUMNS
    x c 1
ENDATA
