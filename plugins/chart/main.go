// Command chart is a tool plugin offering bar_chart, which returns a PNG
// image drawn with the standard library.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct {
	Values []float64 `json:"values" jsonschema:"the bar heights, 1 to 100 numbers (negative values go below the axis)"`
	Width  int       `json:"width,omitempty" jsonschema:"image width in pixels, 64 to 2048 (default 640)"`
	Height int       `json:"height,omitempty" jsonschema:"image height in pixels, 64 to 2048 (default 360)"`
}

var (
	background = color.RGBA{0xff, 0xff, 0xff, 0xff}
	axis       = color.RGBA{0x33, 0x33, 0x33, 0xff}
	bar        = color.RGBA{0x2f, 0x6f, 0xd6, 0xff}
)

// render draws the values as bars around a horizontal axis.
func render(values []float64, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{background}, image.Point{}, draw.Src)
	hi, lo := 0.0, 0.0
	for _, v := range values {
		hi, lo = math.Max(hi, v), math.Min(lo, v)
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	const margin = 8
	plotH := float64(h - 2*margin)
	axisY := margin + int(math.Round(plotH*hi/span))
	slot := float64(w-2*margin) / float64(len(values))
	for i, v := range values {
		x0 := margin + int(float64(i)*slot+slot*0.1)
		x1 := margin + int(float64(i+1)*slot-slot*0.1)
		if x1 <= x0 {
			x1 = x0 + 1
		}
		top := axisY - int(math.Round(plotH*v/span))
		y0, y1 := min(top, axisY), max(top, axisY)
		draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{bar}, image.Point{}, draw.Src)
	}
	draw.Draw(img, image.Rect(margin, axisY, w-margin, axisY+1), &image.Uniform{axis}, image.Point{}, draw.Src)
	return img
}

func chart(_ context.Context, in input, _ tool.Emit) (any, error) {
	if len(in.Values) == 0 || len(in.Values) > 100 {
		return nil, errors.New("give 1 to 100 values")
	}
	for _, v := range in.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("values must be finite numbers")
		}
	}
	w, h := in.Width, in.Height
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 360
	}
	if w < 64 || w > 2048 || h < 64 || h > 2048 {
		return nil, errors.New("width and height must be between 64 and 2048")
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, render(in.Values, w, h)); err != nil {
		return nil, err
	}
	imax := 0
	for i, v := range in.Values {
		if v > in.Values[imax] {
			imax = i
		}
	}
	return tool.Content{
		tool.Text(fmt.Sprintf("Bar chart of %d values (%dx%d PNG); the largest is %g at position %d.",
			len(in.Values), w, h, in.Values[imax], imax+1)),
		tool.Image("image/png", buf.Bytes()),
	}, nil
}

func main() {
	tool.Serve(tool.New("bar_chart", "Draws a bar chart of the given numbers and returns it as a PNG image.", chart,
		tool.ReadOnly(), tool.Idempotent()))
}
