# zoo-chains.sh (sourced by combined-zoo.sh and combined-credit.sh): issue 31's zoo table's
# chains, by the name its rows give them, and the `memsched gen zoo` arguments that make each.
declare -A GEN=(
  [resnet50]="resnet --depth 50"
  [resnet101]="resnet --depth 101"
  [resnet152]="resnet --depth 152"
  [inception3]="inception"
  [vgg19]="vgg --depth 19"
  [gpt2-12]="gpt2 --layers 12"
  [bert-24]="bert --layers 24"
  [densenet121]="densenet --depth 121"
  [densenet201]="densenet --depth 201"
)
