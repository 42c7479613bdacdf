// Command validate checks Kubernetes manifests against the API's own Go types, strictly:
// an unknown or misspelt field, a wrong type or an unknown kind fails (what kubeconform
// does with the JSON schemas, without fetching them). Usage: go run . FILE...
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(strings.TrimSpace(stripComments(string(doc)))) == 0 {
				continue
			}
			if err := check(doc); err != nil {
				fmt.Fprintf(os.Stderr, "%s: document %d: %v\n", path, i+1, err)
				failed = true
			} else {
				fmt.Printf("%s: document %d: valid\n", path, i+1)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func stripComments(doc string) string {
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func check(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	var into any
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		into = &appsv1.Deployment{}
	case "v1 PersistentVolumeClaim":
		into = &corev1.PersistentVolumeClaim{}
	case "v1 Secret":
		into = &corev1.Secret{}
	default:
		return fmt.Errorf("unknown kind %s %s", head.APIVersion, head.Kind)
	}
	return yaml.UnmarshalStrict(doc, into)
}
