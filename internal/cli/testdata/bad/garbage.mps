NAME x
ROWS
 N obj
COLUMNS
    x obj 1 nosuchrow 1
ENDATA
