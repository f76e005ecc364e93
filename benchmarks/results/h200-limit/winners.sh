# Sourced by run_maxreg.sh and run_row_base.sh: WINNERS, the package's best one-step
# configurations of laplacian4, box27 and heat3d at 512^3 on the H200 (as run_zwalk.sh
# lists them first; row_base/configs.json and the maxreg A/B hold the same five), each
# KERNEL:N=V,... for template_ab.py's --config.
WINNERS=(
  laplacian4:BX=4,BY=1,BZ=1,CX=1,CY=2,CZ=2,RIM=1,RIN=1,VX=4,WX=32,WY=4,WZ=4
  laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,RIM=1,RIN=0,VX=4,WX=32,WY=16,WZ=1
  box27:BX=4,BY=4,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=1,SEP=1,VX=4,WX=32,WY=2,WZ=2
  box27:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=0,SEP=1,VX=4,WX=32,WY=4,WZ=1
  heat3d:BX=4,BY=1,BZ=1,CX=1,CY=1,CZ=4,RIM=1,RIN=1,VX=4,WX=64,WY=8,WZ=1
)
