* A second RHS set that gives row LIM2 a value the first does not: HiGHS merges the sets
* (optimum 3), CBC reads only the first (2): refused (ParseError).
NAME          TWOSETS
ROWS
 N  COST
 G  LIM1
 G  LIM2
COLUMNS
    X         COST         1.0   LIM1         1.0
    X         LIM2         1.0
RHS
    RHS1      LIM1         2.0
    RHS2      LIM2         3.0
ENDATA
