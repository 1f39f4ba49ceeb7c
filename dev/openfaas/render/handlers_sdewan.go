// What faas-netes CE does with the gateway's requests, computed by faas-netes's own code against
// a fake Kubernetes (client-go's fake clientset) instead of a cluster, so nothing is ever created
// and nothing leaves the machine.
//
// dev/openfaas/build.sh copies this file into the unpacked faas-netes sources as
// pkg/handlers/zz_sdewan_render.go (the package's unexported makeDeploymentSpec, makeServiceSpec
// and the CE limits are reachable only from inside it) and builds ../main.go against it; it is
// never built in this repository.
//
// Each request is answered as faas-netes answers it:
//   - secret (any method): MakeSecretHandler itself, served through httptest.
//   - deploy, PUT (faas-cli deploy's first try) of a function that does not exist: MakeUpdateHandler
//     itself (its 404 comes before anything reaches the network).
//   - deploy, POST: MakeDeployHandler's steps in its order, each one faas-netes's own function
//     (ValidateDeployRequest, the namespace rule, GetSecrets, makeDeploymentSpec, the
//     MaxFunctions count, makeServiceSpec, the creates), except isAnonymous: that HEADs the image
//     in its registry (a licence check needing the Internet), so it is reported as not run.
//   - deploy, PUT of an existing function: the same steps, replacing the objects (a fresh
//     install's objects; faas-netes's update path edits the live Deployment instead).
package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/openfaas/faas-netes/pkg/k8s"
	types "github.com/openfaas/faas-provider/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

// SdewanInput is what the gateway stand-in knows: the provider's settings (the chart's values),
// the functions and Secrets that exist, and the requests to answer, in order.
type SdewanInput struct {
	Namespace      string          `json:"namespace"`
	HTTPProbe      bool            `json:"httpProbe"`
	SetNonRootUser bool            `json:"setNonRootUser"`
	Functions      []string        `json:"functions"`
	Secrets        []SdewanSecret  `json:"secrets"`
	Requests       []SdewanRequest `json:"requests"`
}

// SdewanSecret is a Secret that exists in the function namespace: its keys (values are not
// needed: faas-netes projects each key as a file), type and labels (faas-netes lists only the
// Secrets it made, labelled app.kubernetes.io/managed-by=openfaas).
type SdewanSecret struct {
	Name   string            `json:"name"`
	Type   string            `json:"type,omitempty"`
	Keys   []string          `json:"keys"`
	Labels map[string]string `json:"labels,omitempty"`
}

// SdewanRequest is one request as the gateway forwards it to the provider.
type SdewanRequest struct {
	Kind   string `json:"kind"` // "deploy" (/system/functions) or "secret" (/system/secrets)
	Method string `json:"method"`
	Query  string `json:"query,omitempty"`
	Body   string `json:"body"`
}

// SdewanResult is faas-netes's answer and the objects it created or replaced.
type SdewanResult struct {
	Status  int               `json:"status"`
	Body    string            `json:"body"`
	Objects []json.RawMessage `json:"objects"`
	NotRun  []string          `json:"notRun,omitempty"`
}

type sdewanProvider struct {
	namespace string
	client    *fake.Clientset
	factory   k8s.FunctionFactory
	index     cache.Indexer
	functions *k8s.FunctionList
}

// SdewanRun answers every request of input, in order, against one fake cluster.
func SdewanRun(input SdewanInput) ([]SdewanResult, error) {
	p, err := newSdewanProvider(input)
	if err != nil {
		return nil, err
	}
	results := make([]SdewanResult, 0, len(input.Requests))
	for _, request := range input.Requests {
		var result SdewanResult
		switch request.Kind {
		case "secret":
			result = p.secret(request)
		case "deploy":
			result = p.deploy(request)
		default:
			return nil, fmt.Errorf("unknown request kind %q", request.Kind)
		}
		if result.Objects == nil {
			result.Objects = []json.RawMessage{}
		}
		results = append(results, result)
	}
	return results, nil
}

func newSdewanProvider(input SdewanInput) (*sdewanProvider, error) {
	client := fake.NewSimpleClientset()
	// The probe timings faas-netes CE's main.go hardcodes (the chart's probe values are not read).
	factory := k8s.NewFunctionFactory(client, k8s.DeploymentConfig{
		RuntimeHTTPPort: 8080,
		HTTPProbe:       input.HTTPProbe,
		SetNonRootUser:  input.SetNonRootUser,
		ReadinessProbe:  &k8s.ProbeConfig{InitialDelaySeconds: 2, TimeoutSeconds: 1, PeriodSeconds: 2},
		LivenessProbe:   &k8s.ProbeConfig{InitialDelaySeconds: 2, TimeoutSeconds: 1, PeriodSeconds: 2},
	}, nil)
	// The Deployment lister faas-netes counts functions with, kept in step with the fake cluster
	// (an informer's cache with no lag).
	index := cache.NewIndexer(cache.MetaNamespaceKeyFunc,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	p := &sdewanProvider{
		namespace: input.Namespace,
		client:    client,
		factory:   factory,
		index:     index,
		functions: k8s.NewFunctionList(input.Namespace, appslisters.NewDeploymentLister(index)),
	}
	ctx := context.Background()
	for _, s := range input.Secrets {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: input.Namespace, Labels: s.Labels},
			Type:       corev1.SecretType(s.Type),
			Data:       map[string][]byte{},
		}
		if secret.Type == "" {
			secret.Type = corev1.SecretTypeOpaque
		}
		for _, key := range s.Keys {
			secret.Data[key] = []byte{}
		}
		if _, err := client.CoreV1().Secrets(input.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	// A function that exists is a Deployment labelled faas_function (what faas-netes counts).
	for _, name := range input.Functions {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: input.Namespace, Labels: map[string]string{"faas_function": name},
		}}
		if err := p.store(d); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// store creates or replaces d in the fake cluster and in the lister's index.
func (p *sdewanProvider) store(d *appsv1.Deployment) error {
	deployments := p.client.AppsV1().Deployments(p.namespace)
	created, err := deployments.Create(context.Background(), d, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = deployments.Update(context.Background(), d, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	return p.index.Update(created)
}

func (p *sdewanProvider) serve(handler http.HandlerFunc, request SdewanRequest) SdewanResult {
	url := "/system/" + request.Kind
	if request.Query != "" {
		url += "?" + request.Query
	}
	r := httptest.NewRequest(request.Method, url, bytes.NewBufferString(request.Body))
	w := httptest.NewRecorder()
	handler(w, r)
	return SdewanResult{Status: w.Code, Body: w.Body.String()}
}

func (p *sdewanProvider) secret(request SdewanRequest) SdewanResult {
	result := p.serve(MakeSecretHandler(p.namespace, p.client), request)
	if request.Method != http.MethodPost && request.Method != http.MethodPut {
		return result
	}
	if result.Status < 200 || result.Status > 299 {
		return result
	}
	var secret types.Secret
	if err := json.Unmarshal([]byte(request.Body), &secret); err != nil {
		return result
	}
	stored, err := p.client.CoreV1().Secrets(p.namespace).Get(context.Background(), secret.Name, metav1.GetOptions{})
	if err != nil {
		return result
	}
	stored.APIVersion, stored.Kind = "v1", "Secret"
	result.Objects = append(result.Objects, sdewanJSON(stored))
	return result
}

// failed is http.Error's reply: the message and a newline.
func failed(status int, format string, args ...any) SdewanResult {
	return SdewanResult{Status: status, Body: fmt.Sprintf(format, args...) + "\n"}
}

func (p *sdewanProvider) deploy(request SdewanRequest) SdewanResult {
	if request.Method == http.MethodPut {
		var fd types.FunctionDeployment
		exists := false
		if json.Unmarshal([]byte(request.Body), &fd) == nil && fd.Service != "" {
			_, err := p.client.AppsV1().Deployments(p.namespace).Get(context.Background(), fd.Service, metav1.GetOptions{})
			exists = err == nil
		}
		if !exists {
			return p.serve(MakeUpdateHandler(p.namespace, p.factory), request)
		}
	} else if request.Method != http.MethodPost {
		return failed(http.StatusMethodNotAllowed, "method %s is not a deploy", request.Method)
	}
	return p.create(request)
}

// create follows MakeDeployHandler (deploy.go) step by step; a PUT of an existing function
// replaces its objects instead of creating them.
func (p *sdewanProvider) create(request SdewanRequest) SdewanResult {
	replace := request.Method == http.MethodPut
	fd := types.FunctionDeployment{}
	if err := json.Unmarshal([]byte(request.Body), &fd); err != nil {
		if replace {
			return failed(http.StatusBadRequest, "unable to unmarshal request: %s", err.Error())
		}
		return failed(http.StatusBadRequest, "failed to unmarshal request: %s", err.Error())
	}
	if err := ValidateDeployRequest(&fd); err != nil {
		return failed(http.StatusBadRequest, "validation failed: %s", err.Error())
	}
	namespace := p.namespace
	if len(fd.Namespace) > 0 {
		namespace = fd.Namespace
	}
	if namespace != p.namespace {
		return failed(http.StatusBadRequest, "namespace must be: %s", p.namespace)
	}
	existingSecrets, err := k8s.NewSecretsClient(p.client).GetSecrets(namespace, fd.Secrets)
	if err != nil {
		return failed(http.StatusBadRequest, "unable to fetch secrets: %s", err.Error())
	}
	notRun := []string{"isAnonymous: faas-netes CE HEADs " + fd.Image +
		" anonymously in its registry and refuses an image it cannot reach (400 \"the Community Edition license agreement only allows public images\"); that needs the registry, not run here"}
	deployment, err := makeDeploymentSpec(fd, existingSecrets, p.factory)
	if err != nil {
		return failed(http.StatusBadRequest, "failed create Deployment spec: %s", err.Error())
	}
	if !replace {
		count, err := p.functions.Count()
		if err != nil {
			return failed(http.StatusInternalServerError, "unable to count functions: %s", err.Error())
		}
		if count+1 > MaxFunctions {
			return failed(http.StatusBadRequest, "unable to create function, maximum: %d, visit https://openfaas.com/pricing to upgrade to OpenFaaS Standard", MaxFunctions)
		}
	}
	deployments := p.client.AppsV1().Deployments(namespace)
	var created *appsv1.Deployment
	if replace {
		created, err = deployments.Update(context.Background(), deployment, metav1.UpdateOptions{})
	} else {
		created, err = deployments.Create(context.Background(), deployment, metav1.CreateOptions{})
	}
	if err != nil {
		return failed(http.StatusInternalServerError, "unable create Deployment: %s", err.Error())
	}
	if err := p.index.Update(created); err != nil {
		return failed(http.StatusInternalServerError, "unable to index Deployment: %s", err.Error())
	}
	serviceSpec, err := makeServiceSpec(fd, p.factory)
	if err != nil {
		return failed(http.StatusBadRequest, "failed create Service spec: %s", err.Error())
	}
	services := p.client.CoreV1().Services(namespace)
	var service *corev1.Service
	if replace {
		if err := services.Delete(context.Background(), fd.Service, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return failed(http.StatusInternalServerError, "failed replace Service: %s", err.Error())
		}
	}
	service, err = services.Create(context.Background(), serviceSpec, metav1.CreateOptions{})
	if err != nil {
		return failed(http.StatusBadRequest, "failed create Service: %s", err.Error())
	}
	created.APIVersion, created.Kind = "apps/v1", "Deployment"
	service.APIVersion, service.Kind = "v1", "Service"
	return SdewanResult{
		Status:  http.StatusAccepted,
		Objects: []json.RawMessage{sdewanJSON(created), sdewanJSON(service)},
		NotRun:  notRun,
	}
}

func sdewanJSON(object any) json.RawMessage {
	b, err := json.Marshal(object)
	if err != nil {
		panic(err)
	}
	return b
}
