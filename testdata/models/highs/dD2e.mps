NAME          D-Scientific
ROWS
 N  COST
COLUMNS
    C1        COST         -1.0
    C2        COST         -2.0
BOUNDS
 UP BOUNDS    C1          1.0D3
 UP BOUNDS    C2          1.0d3
ENDATA
