* The same with the lower bound written (MI): every reader agrees, optimum -5.
NAME          NEGUBMI
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0   LIM          1.0
RHS
    RHS       LIM         -5.0
BOUNDS
 MI BND       X
 UP BND       X           -2.0
ENDATA
