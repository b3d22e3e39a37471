NAME x
ROWS
 N obj
COLUMNS
    x obj nan
ENDATA
