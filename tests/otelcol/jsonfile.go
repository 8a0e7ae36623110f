// SPDX-License-Identifier: GPL-2.0
//
// The jsonfile exporter: for every profiles request, one line appended to
// the file its config names ("path"), pdata's OTLP/JSON of the whole
// request (resourceProfiles and dictionary), written with one write call so
// that a reader never sees half a line.  No queue: the receiver answers the
// request only once the line is written (or answers the error).  Built by
// scripts/build-otelcol.sh with main.go.
package main

import (
	"context"
	"errors"
	"os"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

type jsonFileConfig struct {
	// Path is the file the lines are appended to (created when missing).
	Path string `mapstructure:"path"`
}

func (c *jsonFileConfig) Validate() error {
	if c.Path == "" {
		return errors.New("path must be set")
	}
	return nil
}

func newJSONFileFactory() exporter.Factory {
	return xexporter.NewFactory(
		component.MustNewType("jsonfile"),
		func() component.Config { return &jsonFileConfig{} },
		xexporter.WithProfiles(createJSONFileProfiles, component.StabilityLevelDevelopment),
	)
}

type jsonFileExporter struct {
	path string
	mu   sync.Mutex
	file *os.File
}

func (e *jsonFileExporter) start(context.Context, component.Host) error {
	f, err := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	e.file = f
	return nil
}

func (e *jsonFileExporter) shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file == nil {
		return nil
	}
	err := e.file.Close()
	e.file = nil
	return err
}

func (e *jsonFileExporter) pushProfiles(_ context.Context, pd pprofile.Profiles) error {
	m := pprofile.JSONMarshaler{}
	buf, err := m.MarshalProfiles(pd)
	if err != nil {
		return err
	}
	buf = append(buf, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.file == nil {
		return errors.New("jsonfile: not started")
	}
	// an *os.File is not buffered: this write is the flush
	n, err := e.file.Write(buf)
	if err == nil && n != len(buf) {
		err = errors.New("jsonfile: short write")
	}
	return err
}

func createJSONFileProfiles(ctx context.Context, set exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
	e := &jsonFileExporter{path: cfg.(*jsonFileConfig).Path}
	return xexporterhelper.NewProfiles(ctx, set, cfg, e.pushProfiles,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
	)
}
