package zoo

import (
	"github.com/memsched/memsched/instances"
)

// tensor is an activation of shape batch × c × h × w (h = w = 1 for vectors), identified so
// that a tensor saved by two layers is counted once.
type tensor struct {
	id      int
	c, h, w int64
}

// stage accumulates one chain stage layer by layer: which tensors its backward saves (ā), the
// forward FLOPs, the parameters, and the transient memory of its forward and backward.
//
// What each layer saves for its backward (PyTorch autograd): conv and linear their input; batch
// norm its input (plus per-channel statistics, ignored); ReLU (in place) its output; max pooling
// its input and int64 indices; average pooling, addition, concatenation and dropout at
// inference nothing. The stage's input a^{ℓ-1} is stored separately in 004's model, so it is
// not part of ā^ℓ; the output a^ℓ always is.
type stage struct {
	batch, bytes int64
	sizes        []int64 // bytes per tensor id
	saved        map[int]bool
	extraSaved   int64 // saved bytes that are not activations (max-pool indices)
	flops        float64
	params       int64
	transient    int64 // largest intermediate input+output pair of one layer
	input        tensor
}

func newStage(batch int64, dt DType, in tensor) (*stage, tensor) {
	s := &stage{batch: batch, bytes: dt.Bytes, saved: map[int]bool{}}
	s.input = s.tensor(in.c, in.h, in.w)
	return s, s.input
}

func (s *stage) tensor(c, h, w int64) tensor {
	t := tensor{id: len(s.sizes), c: c, h: h, w: w}
	s.sizes = append(s.sizes, mul(s.batch, c, h, w, s.bytes))
	return t
}

func (s *stage) size(t tensor) int64 { return s.sizes[t.id] }

// step records the transient memory of a layer reading in and writing out: both alive, unless
// in is the stage input (stored in a^{ℓ-1} anyway).
func (s *stage) step(in, out tensor) {
	m := s.size(out)
	if in.id != s.input.id {
		m = add(m, s.size(in))
	}
	s.transient = max(s.transient, m)
}

func outDim(in, k, stride, pad int64) int64 { return (in+2*pad-k)/stride + 1 }

// conv is a 2-D convolution without bias, kernel kh×kw, stride sh×sw, padding ph×pw.
func (s *stage) conv(x tensor, cout, kh, kw, sh, sw, ph, pw int64) tensor {
	y := s.tensor(cout, outDim(x.h, kh, sh, ph), outDim(x.w, kw, sw, pw))
	s.saved[x.id] = true
	s.flops += 2 * float64(s.batch) * float64(cout) * float64(y.h) * float64(y.w) * float64(x.c) * float64(kh) * float64(kw)
	s.params = add(s.params, mul(cout, x.c, kh, kw))
	s.step(x, y)
	return y
}

// convSq is conv with a square kernel, equal strides and paddings.
func (s *stage) convSq(x tensor, cout, k, stride, pad int64) tensor {
	return s.conv(x, cout, k, k, stride, stride, pad, pad)
}

func (s *stage) bn(x tensor) tensor {
	y := s.tensor(x.c, x.h, x.w)
	s.saved[x.id] = true
	s.params = add(s.params, mul(2, x.c))
	s.step(x, y)
	return y
}

// relu is in place: it saves its output, which is its input's storage.
func (s *stage) relu(x tensor) tensor {
	s.saved[x.id] = true
	return x
}

// convBias is convSq with a bias (VGG's convolutions have one; those followed by batch norm
// do not).
func (s *stage) convBias(x tensor, cout, k, stride, pad int64) tensor {
	y := s.convSq(x, cout, k, stride, pad)
	s.params = add(s.params, cout)
	return y
}

// basic is conv → batch norm → ReLU (torchvision's BasicConv2d and ResNet's conv-bn-relu).
func (s *stage) basic(x tensor, cout, kh, kw, sh, sw, ph, pw int64) tensor {
	return s.relu(s.bn(s.conv(x, cout, kh, kw, sh, sw, ph, pw)))
}

func (s *stage) maxpool(x tensor, k, stride, pad int64) tensor {
	y := s.tensor(x.c, outDim(x.h, k, stride, pad), outDim(x.w, k, stride, pad))
	s.saved[x.id] = true
	s.extraSaved = add(s.extraSaved, mul(s.batch, y.c, y.h, y.w, 8)) // int64 indices
	s.step(x, y)
	return y
}

func (s *stage) avgpool(x tensor, k, stride, pad int64) tensor {
	y := s.tensor(x.c, outDim(x.h, k, stride, pad), outDim(x.w, k, stride, pad))
	s.step(x, y)
	return y
}

// globalAvg is adaptive average pooling to 1×1.
func (s *stage) globalAvg(x tensor) tensor {
	y := s.tensor(x.c, 1, 1)
	s.step(x, y)
	return y
}

// linear is a fully-connected layer with bias on a flattened input.
func (s *stage) linear(x tensor, out int64) tensor {
	in := mul(x.c, x.h, x.w)
	y := s.tensor(out, 1, 1)
	s.saved[x.id] = true
	s.flops += 2 * float64(s.batch) * float64(in) * float64(out)
	s.params = add(s.params, mul(in, out), out)
	s.step(x, y)
	return y
}

func (s *stage) add(a, b tensor) tensor {
	y := s.tensor(a.c, a.h, a.w)
	s.step(a, y)
	return y
}

func (s *stage) concat(ts ...tensor) tensor {
	c := int64(0)
	for _, t := range ts {
		c += t.c
	}
	y := s.tensor(c, ts[0].h, ts[0].w)
	s.transient = max(s.transient, s.size(y))
	return y
}

// finish turns the stage into a chain stage with output out: a = |out|, ā = saved tensors
// (the stage input excepted) plus out, δ = a, o_f = o_b = the largest transient pair (an
// estimate: intermediate tensors of one layer during the forward, their gradients during the
// backward), w = parameters, times from the FLOPs.
func (s *stage) finish(name string, out tensor, dev Device, dt DType) instances.Stage {
	abar := s.extraSaved
	for id, ok := range s.saved {
		if ok && id != s.input.id && id != out.id {
			abar = add(abar, s.sizes[id])
		}
	}
	a := s.size(out)
	abar = add(abar, a)
	uf, ub := dev.seconds(s.flops, dt)
	return instances.Stage{Name: name, UF: uf, UB: ub, A: a, ABar: abar, Delta: a,
		OF: s.transient, OB: s.transient, W: mul(s.params, dt.Bytes)}
}

// lossStage is the cross-entropy over the classes: input logits, scalar output; its backward
// needs the logits (softmax), kept as ā.
func lossStage(batch, classes int64, dt DType) instances.Stage {
	return instances.Stage{Name: "loss", A: 0, ABar: mul(batch, classes, dt.Bytes), Delta: 0}
}
