* Fixed-format MPS: fields in columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61, names with spaces
* (as in Netlib forplan). minimize x + 2y, x + y >= 3, x <= 1: optimum 5.
NAME          FIXED
ROWS
 N  COST ROW
 G  ROW 1
 L  ROW 2
COLUMNS
    X 1       COST ROW  1.0            ROW 1     1.0
    X 1       ROW 2     1.0
    Y 2       COST ROW  2.0            ROW 1     1.0
RHS
    RHS 1     ROW 1     3.0            ROW 2     1.0
ENDATA
