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

package importer

import (
	"context"

	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// until returns once done reports true, re-asking it whenever the object
// key of list's kind changes: the command watches rather than polls. done
// is asked once the watch is open, so no change is missed between the two;
// a watch the API server ends is opened again. It returns done's error, or
// the context's when it ends first.
func until(ctx context.Context, c client.WithWatch, list client.ObjectList, key client.ObjectKey,
	done func(ctx context.Context) (bool, error)) error {
	opts := []client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", key.Name)}}
	if key.Namespace != "" {
		opts = append(opts, client.InNamespace(key.Namespace))
	}
	for {
		ok, err := watchOnce(ctx, c, list, opts, done)
		if err != nil || ok {
			return err
		}
	}
}

// watchOnce asks done once a watch is open and again on each of its
// events, until done is true, the watch ends (false, nil) or ctx does.
func watchOnce(ctx context.Context, c client.WithWatch, list client.ObjectList, opts []client.ListOption,
	done func(ctx context.Context) (bool, error)) (bool, error) {
	w, err := c.Watch(ctx, list, opts...)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	for {
		if ok, err := done(ctx); err != nil || ok {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case _, open := <-w.ResultChan():
			if !open {
				return false, nil
			}
		}
	}
}
