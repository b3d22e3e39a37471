// Package zoo generates chain profiles of standard networks analytically: ResNet, DenseNet,
// Inception v3, VGG, GPT-2 and BERT. Sizes come from the layer shapes exactly (which tensors
// each backward saves is listed per layer in docs/zoo.md); times come from FLOP counts over a
// device profile. The granularity is rotor's (004 §5.1): one stage per block of the
// nn.Sequential a user would checkpoint (a residual block, a dense layer, an inception module,
// a transformer block), then a loss stage.
package zoo

import (
	"fmt"
	"sort"
	"strings"
)

// Device is a throughput profile: time = FLOPs / (Peak · Efficiency), backward FLOPs =
// BackwardRatio × forward FLOPs.
type Device struct {
	Name string
	// PeakFP32 and PeakHalf are peak FLOP/s for fp32 and for fp16/bf16 (tensor cores).
	PeakFP32, PeakHalf float64
	// Efficiency is the achieved fraction of peak (0 < e ≤ 1).
	Efficiency float64
	// BackwardRatio is backward FLOPs over forward FLOPs (2: gradients for inputs and weights).
	BackwardRatio float64
}

// Devices are the presets (docs/zoo.md cites the datasheets).
var Devices = map[string]Device{
	// NVIDIA V100 SXM2: 15.7 TFLOP/s fp32, 125 TFLOP/s fp16 tensor (V100 datasheet).
	"v100": {Name: "v100", PeakFP32: 15.7e12, PeakHalf: 125e12, Efficiency: 0.5, BackwardRatio: 2},
	// NVIDIA H100 SXM5: 67 TFLOP/s fp32, 989 TFLOP/s dense fp16/bf16 tensor (H100 datasheet).
	"h100": {Name: "h100", PeakFP32: 67e12, PeakHalf: 989e12, Efficiency: 0.5, BackwardRatio: 2},
}

// LookupDevice returns the preset named name.
func LookupDevice(name string) (Device, error) {
	d, ok := Devices[strings.ToLower(name)]
	if !ok {
		names := make([]string, 0, len(Devices))
		for n := range Devices {
			names = append(names, n)
		}
		sort.Strings(names)
		return Device{}, fmt.Errorf("zoo: unknown device %q (known: %s)", name, strings.Join(names, ", "))
	}
	return d, nil
}

// DType is the element type of activations and weights.
type DType struct {
	Name  string
	Bytes int64
	Half  bool // runs on the half-precision tensor-core peak
}

// LookupDType returns fp32, fp16 or bf16.
func LookupDType(name string) (DType, error) {
	switch strings.ToLower(name) {
	case "", "fp32", "float32":
		return DType{"fp32", 4, false}, nil
	case "fp16", "float16", "half":
		return DType{"fp16", 2, true}, nil
	case "bf16", "bfloat16":
		return DType{"bf16", 2, true}, nil
	}
	return DType{}, fmt.Errorf("zoo: unknown dtype %q (want fp32, fp16 or bf16)", name)
}

// seconds converts forward FLOPs into forward and backward times.
func (d Device) seconds(flops float64, t DType) (uf, ub float64) {
	peak := d.PeakFP32
	if t.Half {
		peak = d.PeakHalf
	}
	uf = flops / (peak * d.Efficiency)
	return uf, uf * d.BackwardRatio
}

// lookup resolves a dtype and a device name (device defaults to v100).
func lookup(dtype, device string) (DType, Device, error) {
	dt, err := LookupDType(dtype)
	if err != nil {
		return DType{}, Device{}, err
	}
	if device == "" {
		device = "v100"
	}
	dev, err := LookupDevice(device)
	return dt, dev, err
}
