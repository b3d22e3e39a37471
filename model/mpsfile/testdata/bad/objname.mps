NAME on
OBJNAME
    cost2
ROWS
 N cost1
 N cost2
COLUMNS
    x cost1 1 cost2 -1
ENDATA
