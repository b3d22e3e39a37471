package zoo

import (
	"fmt"

	"github.com/memsched/memsched/instances"
)

// CNNConfig parameterizes the image networks.
type CNNConfig struct {
	// Depth selects the variant (ResNet 18/34/50/101/152/200/1001, DenseNet 121/161/169/201,
	// VGG 16/19; ignored by Inception v3).
	Depth int
	// Image is the input height and width (224 for ImageNet, 299 for Inception v3, 32 for
	// ResNet-1001's CIFAR setting); Batch the batch size.
	Image, Batch int
	// DType defaults to fp32; Device to v100; Classes to 1000 (10 for ResNet-1001).
	DType, Device string
	Classes       int
}

type cnn struct {
	cfg    CNNConfig
	dt     DType
	dev    Device
	batch  int64
	chain  *instances.Chain
	params string // the generator's parameters, for errors
	cur    tensor // shape of the current chain activation (ids are per stage)
	stageN int
}

func newCNN(family string, cfg CNNConfig, defClasses int) (*cnn, error) {
	dt, dev, err := lookup(cfg.DType, cfg.Device)
	if err != nil {
		return nil, err
	}
	if cfg.Batch < 1 || cfg.Image < 8 {
		return nil, fmt.Errorf("zoo: %s: batch %d and image %d must be at least 1 and 8", family, cfg.Batch, cfg.Image)
	}
	if cfg.Classes == 0 {
		cfg.Classes = defClasses
	}
	if cfg.Classes < 1 {
		return nil, fmt.Errorf("zoo: %s: classes %d must be positive", family, cfg.Classes)
	}
	c := &cnn{cfg: cfg, dt: dt, dev: dev, batch: int64(cfg.Batch),
		params: fmt.Sprintf("%s image %d, batch %d, classes %d", family, cfg.Image, cfg.Batch, cfg.Classes)}
	c.chain = &instances.Chain{Name: fmt.Sprintf("%s image=%d batch=%d %s %s (memsched zoo, analytic)",
		family, cfg.Image, cfg.Batch, dt.Name, dev.Name)}
	in := tensor{c: 3, h: int64(cfg.Image), w: int64(cfg.Image)}
	c.chain.A0 = mul(c.batch, 3, in.h, in.w, dt.Bytes)
	c.chain.Delta0 = c.chain.A0
	c.cur = in
	return c, nil
}

// stage opens a stage on the current activation; done closes it with output out.
func (c *cnn) stage() (*stage, tensor) { return newStage(c.batch, c.dt, c.cur) }

func (c *cnn) done(s *stage, name string, out tensor) {
	c.chain.Stages = append(c.chain.Stages, s.finish(name, out, c.dev, c.dt))
	c.cur = tensor{c: out.c, h: out.h, w: out.w}
}

// result checks the finished chain's sizes (checkSizes).
func (c *cnn) result(ch *instances.Chain) (*instances.Chain, error) {
	if err := checkSizes(ch, c.params); err != nil {
		return nil, err
	}
	return ch, nil
}

// head is global average pooling and the classifier, then the loss stage.
func (c *cnn) head() *instances.Chain {
	s, x := c.stage()
	c.done(s, "head", s.linear(s.globalAvg(x), int64(c.cfg.Classes)))
	c.chain.Stages = append(c.chain.Stages, lossStage(c.batch, int64(c.cfg.Classes), c.dt))
	return c.chain
}

var resnetBlocks = map[int]struct {
	bottleneck bool
	layers     [4]int
}{
	18: {false, [4]int{2, 2, 2, 2}}, 34: {false, [4]int{3, 4, 6, 3}}, 50: {true, [4]int{3, 4, 6, 3}},
	101: {true, [4]int{3, 4, 23, 3}}, 152: {true, [4]int{3, 8, 36, 3}}, 200: {true, [4]int{3, 24, 36, 3}},
}

// ResNet builds ResNet-18/34/50/101/152/200 (He et al. 2016, torchvision layout: stem, one
// stage per residual block, head, loss) and ResNet-1001 (pre-activation, CIFAR layout:
// 3 groups of 111 bottleneck blocks of widths 64/128/256, He et al. 2016b).
func ResNet(cfg CNNConfig) (*instances.Chain, error) {
	if cfg.Depth == 1001 {
		return resnet1001(cfg)
	}
	spec, ok := resnetBlocks[cfg.Depth]
	if !ok {
		return nil, fmt.Errorf("zoo: ResNet depth %d (want 18, 34, 50, 101, 152, 200 or 1001)", cfg.Depth)
	}
	c, err := newCNN(fmt.Sprintf("resnet%d", cfg.Depth), cfg, 1000)
	if err != nil {
		return nil, err
	}
	s, x := c.stage()
	c.done(s, "stem", s.maxpool(s.basic(x, 64, 7, 7, 2, 2, 3, 3), 3, 2, 1))
	inC := int64(64)
	for g, n := range spec.layers {
		width := int64(64) << g
		for b := 0; b < n; b++ {
			stride := int64(1)
			if b == 0 && g > 0 {
				stride = 2
			}
			s, x := c.stage()
			var y tensor
			out := width
			if spec.bottleneck {
				out = 4 * width
				y = s.basic(x, width, 1, 1, 1, 1, 0, 0)
				y = s.basic(y, width, 3, 3, stride, stride, 1, 1)
				y = s.bn(s.convSq(y, out, 1, 1, 0))
			} else {
				y = s.basic(x, width, 3, 3, stride, stride, 1, 1)
				y = s.bn(s.convSq(y, width, 3, 1, 1))
			}
			short := x
			if stride != 1 || inC != out {
				short = s.bn(s.convSq(x, out, 1, stride, 0))
			}
			c.done(s, fmt.Sprintf("layer%d.%d", g+1, b), s.relu(s.add(y, short)))
			inC = out
		}
	}
	return c.result(c.head())
}

// resnet1001 is the pre-activation bottleneck ResNet-1001 for 32×32 images (9·111+2 layers).
func resnet1001(cfg CNNConfig) (*instances.Chain, error) {
	c, err := newCNN("resnet1001", cfg, 10)
	if err != nil {
		return nil, err
	}
	s, x := c.stage()
	c.done(s, "stem", s.convSq(x, 16, 3, 1, 1))
	inC := int64(16)
	for g := 0; g < 3; g++ {
		width := int64(16) << g
		for b := 0; b < 111; b++ {
			stride := int64(1)
			if b == 0 && g > 0 {
				stride = 2
			}
			s, x := c.stage()
			pre := s.relu(s.bn(x))
			y := s.convSq(pre, width, 1, 1, 0)
			y = s.convSq(s.relu(s.bn(y)), width, 3, stride, 1)
			y = s.convSq(s.relu(s.bn(y)), 4*width, 1, 1, 0)
			short := x
			if stride != 1 || inC != 4*width {
				short = s.convSq(pre, 4*width, 1, stride, 0)
			}
			c.done(s, fmt.Sprintf("group%d.%d", g+1, b), s.add(y, short))
			inC = 4 * width
		}
	}
	s, x = c.stage()
	c.done(s, "final-bn", s.relu(s.bn(x)))
	return c.result(c.head())
}

var vggLayers = map[int][]int{
	16: {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0},
	19: {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0},
}

// VGG builds VGG-16/19 (Simonyan & Zisserman 2015, torchvision without batch norm): one stage
// per 3×3 convolution + ReLU (a max pooling joins the stage before it), then the three
// fully-connected layers as one stage, then the loss.
func VGG(cfg CNNConfig) (*instances.Chain, error) {
	layers, ok := vggLayers[cfg.Depth]
	if !ok {
		return nil, fmt.Errorf("zoo: VGG depth %d (want 16 or 19)", cfg.Depth)
	}
	c, err := newCNN(fmt.Sprintf("vgg%d", cfg.Depth), cfg, 1000)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(layers); i++ {
		s, x := c.stage()
		y := s.relu(s.convBias(x, int64(layers[i]), 3, 1, 1))
		name := fmt.Sprintf("conv%d", i)
		if i+1 < len(layers) && layers[i+1] == 0 {
			y = s.maxpool(y, 2, 2, 0)
			i++
		}
		c.done(s, name, y)
	}
	s, x := c.stage()
	y := s.avgpool(x, 1, 1, 0) // adaptive pooling to 7×7 is the identity at 224×224
	y = s.relu(s.linear(y, 4096))
	y = s.relu(s.linear(y, 4096))
	c.done(s, "classifier", s.linear(y, int64(c.cfg.Classes)))
	c.chain.Stages = append(c.chain.Stages, lossStage(c.batch, int64(c.cfg.Classes), c.dt))
	return c.result(c.chain)
}

var densenetSpec = map[int]struct {
	growth, init int64
	blocks       [4]int
}{
	121: {32, 64, [4]int{6, 12, 24, 16}}, 161: {48, 96, [4]int{6, 12, 36, 24}},
	169: {32, 64, [4]int{6, 12, 32, 32}}, 201: {32, 64, [4]int{6, 12, 48, 32}},
}

// DenseNet builds DenseNet-121/161/169/201 (Huang et al. 2017, torchvision layout, bn_size 4):
// one stage per dense layer, whose output is the concatenation of its input and its new
// features (the sequential view of a dense block), one per transition.
func DenseNet(cfg CNNConfig) (*instances.Chain, error) {
	spec, ok := densenetSpec[cfg.Depth]
	if !ok {
		return nil, fmt.Errorf("zoo: DenseNet depth %d (want 121, 161, 169 or 201)", cfg.Depth)
	}
	c, err := newCNN(fmt.Sprintf("densenet%d", cfg.Depth), cfg, 1000)
	if err != nil {
		return nil, err
	}
	s, x := c.stage()
	c.done(s, "stem", s.maxpool(s.basic(x, spec.init, 7, 7, 2, 2, 3, 3), 3, 2, 1))
	for b, n := range spec.blocks {
		for l := 0; l < n; l++ {
			s, x := c.stage()
			y := s.convSq(s.relu(s.bn(x)), 4*spec.growth, 1, 1, 0)
			y = s.convSq(s.relu(s.bn(y)), spec.growth, 3, 1, 1)
			c.done(s, fmt.Sprintf("block%d.%d", b+1, l), s.concat(x, y))
		}
		s, x := c.stage()
		if b < 3 {
			y := s.convSq(s.relu(s.bn(x)), x.c/2, 1, 1, 0)
			c.done(s, fmt.Sprintf("transition%d", b+1), s.avgpool(y, 2, 2, 0))
		} else {
			c.done(s, "final-bn", s.relu(s.bn(x)))
		}
	}
	return c.result(c.head())
}

// InceptionV3 builds Inception v3 (Szegedy et al. 2016, torchvision layout without the
// auxiliary classifier): the stem as two stages, then one stage per inception module
// (Mixed_5b … Mixed_7c). Image 299 by default.
func InceptionV3(cfg CNNConfig) (*instances.Chain, error) {
	if cfg.Image == 0 {
		cfg.Image = 299
	}
	c, err := newCNN("inception_v3", cfg, 1000)
	if err != nil {
		return nil, err
	}
	b := func(s *stage, x tensor, cout, kh, kw, sh, sw, ph, pw int64) tensor {
		return s.basic(x, cout, kh, kw, sh, sw, ph, pw)
	}
	k1 := func(s *stage, x tensor, cout int64) tensor { return b(s, x, cout, 1, 1, 1, 1, 0, 0) }
	s, x := c.stage()
	y := b(s, x, 32, 3, 3, 2, 2, 0, 0)
	y = b(s, y, 32, 3, 3, 1, 1, 0, 0)
	y = b(s, y, 64, 3, 3, 1, 1, 1, 1)
	c.done(s, "stem1", s.maxpool(y, 3, 2, 0))
	s, x = c.stage()
	y = k1(s, x, 80)
	y = b(s, y, 192, 3, 3, 1, 1, 0, 0)
	c.done(s, "stem2", s.maxpool(y, 3, 2, 0))
	inceptionA := func(name string, pool int64) {
		s, x := c.stage()
		b1 := k1(s, x, 64)
		b5 := b(s, k1(s, x, 48), 64, 5, 5, 1, 1, 2, 2)
		b3 := k1(s, x, 64)
		b3 = b(s, b3, 96, 3, 3, 1, 1, 1, 1)
		b3 = b(s, b3, 96, 3, 3, 1, 1, 1, 1)
		bp := k1(s, s.avgpool(x, 3, 1, 1), pool)
		c.done(s, name, s.concat(b1, b5, b3, bp))
	}
	inceptionA("Mixed_5b", 32)
	inceptionA("Mixed_5c", 64)
	inceptionA("Mixed_5d", 64)
	s, x = c.stage()
	b3 := b(s, x, 384, 3, 3, 2, 2, 0, 0)
	bd := b(s, b(s, k1(s, x, 64), 96, 3, 3, 1, 1, 1, 1), 96, 3, 3, 2, 2, 0, 0)
	c.done(s, "Mixed_6a", s.concat(b3, bd, s.maxpool(x, 3, 2, 0)))
	for i, c7 := range []int64{128, 160, 160, 192} {
		s, x := c.stage()
		b1 := k1(s, x, 192)
		b7 := b(s, b(s, k1(s, x, c7), c7, 1, 7, 1, 1, 0, 3), 192, 7, 1, 1, 1, 3, 0)
		bd := k1(s, x, c7)
		bd = b(s, bd, c7, 7, 1, 1, 1, 3, 0)
		bd = b(s, bd, c7, 1, 7, 1, 1, 0, 3)
		bd = b(s, bd, c7, 7, 1, 1, 1, 3, 0)
		bd = b(s, bd, 192, 1, 7, 1, 1, 0, 3)
		bp := k1(s, s.avgpool(x, 3, 1, 1), 192)
		c.done(s, fmt.Sprintf("Mixed_6%c", 'b'+i), s.concat(b1, b7, bd, bp))
	}
	s, x = c.stage()
	b3 = b(s, k1(s, x, 192), 320, 3, 3, 2, 2, 0, 0)
	b7 := k1(s, x, 192)
	b7 = b(s, b7, 192, 1, 7, 1, 1, 0, 3)
	b7 = b(s, b7, 192, 7, 1, 1, 1, 3, 0)
	b7 = b(s, b7, 192, 3, 3, 2, 2, 0, 0)
	c.done(s, "Mixed_7a", s.concat(b3, b7, s.maxpool(x, 3, 2, 0)))
	for _, name := range []string{"Mixed_7b", "Mixed_7c"} {
		s, x := c.stage()
		b1 := k1(s, x, 320)
		t := k1(s, x, 384)
		b3 := s.concat(b(s, t, 384, 1, 3, 1, 1, 0, 1), b(s, t, 384, 3, 1, 1, 1, 1, 0))
		d := b(s, k1(s, x, 448), 384, 3, 3, 1, 1, 1, 1)
		bd := s.concat(b(s, d, 384, 1, 3, 1, 1, 0, 1), b(s, d, 384, 3, 1, 1, 1, 1, 0))
		bp := k1(s, s.avgpool(x, 3, 1, 1), 192)
		c.done(s, name, s.concat(b1, b3, bd, bp))
	}
	return c.result(c.head())
}
