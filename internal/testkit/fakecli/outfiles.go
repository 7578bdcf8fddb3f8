package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// outDir is the folder of the work tree whose files Fetch sends the owner
// with the result (harness.OutDir).
const outDir = ".fetch/out"

// outPNG is the picture [scenario:out-file] leaves: 2×1 pixels, red then
// blue, encoded by image/png with its defaults (a test encodes the same
// image to compare the bytes).
func outPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 0, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// outNotes is the text file [scenario:out-file] leaves beside the picture.
const outNotes = "The page after the change.\n"

// writeOut leaves files for the owner in the work tree's out folder:
// out-file a picture (screenshot.png) and a text file (notes.txt);
// out-symlink what a hostile CLI would: leak.txt, a symlink to
// /etc/passwd, and keys.txt, which holds a credential.
func writeOut(scenario string) error {
	dir := filepath.Join(cwd(), outDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if scenario == "out-symlink" {
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "leak.txt")); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "keys.txt"), []byte("aws_access_key_id = "+fakeAWSKey+"\n"), 0o644)
	}
	data, err := outPNG()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "screenshot.png"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(outNotes), 0o644)
}
