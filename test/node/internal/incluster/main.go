/*
Copyright 2026 The address-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command incluster is a workload of the node harness's own test: it
// reaches the API server as every manager of this project does, with
// client-go's in-cluster configuration (the `kubernetes` Service's
// address from the environment kubelet sets, the Pod's ServiceAccount
// token, the cluster's CA), and prints one JSON line of what it saw: the
// server's version, who the server says it is, and the status of a list it
// is not allowed (nodes). It exits 1 if any request fails in another way.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Report is the line the program prints.
type Report struct {
	// Host is the server the in-cluster configuration dials.
	Host string `json:"host"`
	// CAFile is the file the server's certificate was verified against.
	CAFile string `json:"caFile"`
	// Version is the server's /version.
	Version string `json:"version"`
	// User is the name the server authenticated the token as.
	User string `json:"user"`
	// ListNodes is the HTTP status of listing nodes.
	ListNodes int32 `json:"listNodes"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	r := Report{Host: cfg.Host, CAFile: cfg.CAFile}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("GET /version: %w", err)
	}
	r.Version = v.GitVersion
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("who am I: %w", err)
	}
	r.User = review.Status.UserInfo.Username
	r.ListNodes = http.StatusOK
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		status, ok := errors.AsType[*apierrors.StatusError](err)
		if !ok {
			return fmt.Errorf("listing nodes: %w", err)
		}
		r.ListNodes = status.ErrStatus.Code
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}
