// The Pulumi engine's reading of a stack file, as a table: gpuplane's tests compare its own reader with it.
//
// The engine reads Pulumi.<stack>.yaml with gopkg.in/yaml.v3 (3.0.1) into config.Value, whose UnmarshalYAML
// decodes the node into `any` and converts it with unmarshalObject, then keeps MarshalString's text: a string as
// written, a bool or number as its JSON, a list or map as JSON (pulumi/pulumi sdk/go/common/resource/config,
// value.go and object.go, read 2026-11-26 at 042b255). That conversion is restated below (it is short); yaml.v3
// is the real library, from Debian's golang-gopkg-yaml.v3-dev, so the table cannot drift from it.
//
// Build and run (GOPATH mode, no network): see tests/infra/yaml_engine/README.md.
// Input: a JSON list of YAML value texts (stdin). Output: a JSON list, one entry per text, on stdout.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// engineValue is config.Value's YAML reading: text plus whether the text is JSON of a list or map.
type engineValue struct {
	text   string
	object bool
}

func (v *engineValue) UnmarshalYAML(unmarshal func(any) error) error {
	var raw any
	if err := unmarshal(&raw); err != nil {
		return err
	}
	converted, err := toObject(raw)
	if err != nil {
		return err
	}
	switch c := converted.(type) {
	case string:
		v.text = c
	case bool, int64, uint64, float64:
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		v.text = string(b)
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		v.text, v.object = string(b), true
	}
	return nil
}

// toObject: object.go's unmarshalObject on what yaml.v3 decodes into `any`.
func toObject(raw any) (any, error) {
	switch r := raw.(type) {
	case bool, int64, uint64, float64, string, nil:
		return r, nil
	case int:
		return int64(r), nil
	case time.Time:
		return r.String(), nil
	case map[string]any:
		out := map[string]any{}
		for k, item := range r {
			c, err := toObject(item)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := map[string]any{}
		for k, item := range r {
			c, err := toObject(item)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprintf("%v", k)] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(r))
		for i, item := range r {
			c, err := toObject(item)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unexpected wire type %T", r)
	}
}

type stackFile struct {
	Config map[string]engineValue `yaml:"config"`
}

type outcome struct {
	Text   *string `json:"text,omitempty"`
	Object bool    `json:"object,omitempty"`
	Error  string  `json:"error,omitempty"`
}

type row struct {
	YAML   string  `json:"yaml"`
	Tag    string  `json:"tag"`
	Top    outcome `json:"top"`
	Nested outcome `json:"nested"`
}

func read(document string) outcome {
	var file stackFile
	if err := yaml.Unmarshal([]byte(document), &file); err != nil {
		return outcome{Error: err.Error()}
	}
	value := file.Config["gpuplane:x"]
	return outcome{Text: &value.text, Object: value.object}
}

func tagOf(text string) string {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte("v: "+text), &node); err != nil || len(node.Content) == 0 {
		return "error"
	}
	mapping := node.Content[0]
	if len(mapping.Content) < 2 {
		return "error"
	}
	return mapping.Content[1].ShortTag()
}

func main() {
	var texts []string
	if err := json.NewDecoder(os.Stdin).Decode(&texts); err != nil {
		fmt.Fprintln(os.Stderr, "input: a JSON list of YAML value texts:", err)
		os.Exit(2)
	}
	rows := make([]row, 0, len(texts))
	for _, text := range texts {
		rows = append(rows, row{
			YAML:   text,
			Tag:    tagOf(text),
			Top:    read("config:\n  gpuplane:x: " + text + "\n"),
			Nested: read("config:\n  gpuplane:x:\n    v: " + text + "\n"),
		})
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	out.SetEscapeHTML(false)
	if err := out.Encode(rows); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
