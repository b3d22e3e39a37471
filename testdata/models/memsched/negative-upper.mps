* A negative upper bound on a column whose lower bound is left at 0: HiGHS reads [0, -2]
* (infeasible), CBC and CPLEX (-inf, -2] (optimum -5): refused (ParseError).
NAME          NEGUB
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0   LIM          1.0
RHS
    RHS       LIM         -5.0
BOUNDS
 UP BND       X           -2.0
ENDATA
