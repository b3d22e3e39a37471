# The ten-line training script of docs/torch.md, run by test_wheel.py in a fresh virtual
# environment outside the repository, with memsched_torch installed from its wheel.
import torch, memsched_torch
from torch import nn
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
net = memsched_torch.Scheduled(model, budget=0.8, cache=False)  # 80 % of the store-all peak
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for i in range(5):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss = nn.functional.cross_entropy(net(x), y); opt.zero_grad(); loss.backward(); opt.step()
print(net.plan.describe(), "| measured peaks:", [it["measured_peak"] for it in net.stats["iterations"]])
