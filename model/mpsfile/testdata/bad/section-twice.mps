NAME s
ROWS
 N obj
 L c
ROWS
 G d
COLUMNS
    x obj 1 c 1
ENDATA
