* Fortran exponents (1.5D1, 2.0d0) as HiGHS reads them (CBC refuses the file).
* minimize x, 2x >= 15: optimum 7.5.
NAME          DEXP
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0D0  LIM          2.0d0
RHS
    RHS       LIM          1.5D1
ENDATA
