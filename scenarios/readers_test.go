package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input to the price and profile readers (the trace readers':
// scenarios/traces' readers_test.go): every error is an InputError naming
// the file and line, quoting at most MaxQuote bytes.

// requireBadInput checks err is an InputError whose text starts with the
// file and contains want, and quotes no more than MaxQuote bytes.
func requireBadInput(t *testing.T, err error, file, want string) {
	t.Helper()
	require.Error(t, err, want)
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%T %v", err, err)
	require.Equal(t, 2, ie.ExitCode())
	require.True(t, strings.HasPrefix(err.Error(), file), "%q does not start with %s", err.Error(), file)
	require.Contains(t, err.Error(), want)
	require.Less(t, len(err.Error())-len(file), 600, "error too long: %s", err)
}

func TestPriceAndProfileInputsAreRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	paths := []string{"/dev/zero", dir}
	if syscall.Mkfifo(fifo, 0o600) == nil {
		paths = append(paths, fifo)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		_, err := LoadCatalog(p)
		requireBadInput(t, err, p, "not a regular file")
		_, err = ReadPriceFilePath(p)
		requireBadInput(t, err, p, "not a regular file")
		_, err = LoadProfile(p)
		requireBadInput(t, err, p, "not a regular file")
	}
}

func TestPriceAndProfileLongLinesAreRefused(t *testing.T) {
	long := strings.Repeat("9", MaxLineBytes+10)
	p := writeFile(t, "prices.csv", "InstanceType,OnDemandUSDPerHour,Region\n"+long)
	_, err := LoadCatalog(p)
	requireBadInput(t, err, p, p+":2: the line is longer than 1 MiB")
	p = writeFile(t, "profile.yaml", "apiVersion: gpuplan.dev/v1alpha1\nkind: CalibrationProfile\nfabrics: ["+long+"]\n")
	_, err = LoadProfile(p)
	requireBadInput(t, err, p, p+":3: the line is longer than 1 MiB")
	_, err = ReadInput(p)
	requireBadInput(t, err, p, p+":3: the line is longer than 1 MiB")
}

func TestPriceAndProfileErrorsQuoteLittleInput(t *testing.T) {
	secret := strings.Repeat("supersecretpassword", 1000)
	p := writeFile(t, "secret.txt", secret+"\n")
	_, err := LoadProfile(p)
	requireBadInput(t, err, p, p+":1:1: ")
	require.NotContains(t, err.Error(), secret[:MaxQuote+1])
	require.Contains(t, err.Error(), "(19000 bytes)")

	_, err = ReadPriceFile("p.csv", strings.NewReader("InstanceType,OnDemandUSDPerHour,Region\nx,"+strings.Repeat("1", 3000)+"x,r\n"))
	requireBadInput(t, err, "p.csv", `p.csv:2:3: OnDemandUSDPerHour: price "111`)
	require.Contains(t, err.Error(), "(3001 bytes)")
}

func TestPriceAndProfileByteOrderMarksAreDropped(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	cat, err := ReadPriceFile("p.csv", strings.NewReader(bom+"InstanceType,OnDemandUSDPerHour,Region\np4d.24xlarge,32.77,us-east-1\n"))
	require.NoError(t, err)
	require.NotNil(t, cat)
	_, err = ParseProfile("p.yaml", []byte(bom+"apiVersion: gpuplan.dev/v1alpha1\nkind: CalibrationProfile\n"))
	require.NoError(t, err)
}
