* A RHS entry on a free N row (not the objective) means nothing: CBC ignores it (optimum 2);
* HiGHS 1.15 adds it to the objective's constant (-5). memsched reads it as CBC.
NAME          RHSFREE
ROWS
 N  COST
 G  LIM
 N  FREE
COLUMNS
    X         COST         1.0   LIM          1.0
    X         FREE         1.0
RHS
    RHS       LIM          2.0   FREE         7.0
ENDATA
