//! `xp-test-fn --insecure`: serves `RunFunction` (v1) on 0.0.0.0:9443, as
//! a function image does. It passes the desired state through, adds a
//! composed ConfigMap `from-docker` whose data holds the value of the env
//! variable `GREETING` (the runtime-docker-env annotation), marks it
//! ready, and returns a Normal result.

use std::collections::BTreeMap;

use prost_types::{value::Kind, Struct, Value};

mod v1 {
    include!(concat!(env!("OUT_DIR"), "/apiextensions.r#fn.proto.v1.rs"));
}

use v1::function_runner_service_server::{FunctionRunnerService, FunctionRunnerServiceServer};

struct Function;

fn string(s: &str) -> Value {
    Value {
        kind: Some(Kind::StringValue(s.to_string())),
    }
}

fn object(fields: Vec<(&str, Value)>) -> Value {
    Value {
        kind: Some(Kind::StructValue(Struct {
            fields: fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        })),
    }
}

#[tonic::async_trait]
impl FunctionRunnerService for Function {
    async fn run_function(
        &self,
        request: tonic::Request<v1::RunFunctionRequest>,
    ) -> Result<tonic::Response<v1::RunFunctionResponse>, tonic::Status> {
        let req = request.into_inner();
        let mut desired = req.desired.unwrap_or_default();
        let greeting = std::env::var("GREETING").unwrap_or_default();
        let Some(Kind::StructValue(cm)) = object(vec![
            ("apiVersion", string("v1")),
            ("kind", string("ConfigMap")),
            ("data", object(vec![("greeting", string(&greeting))])),
        ])
        .kind
        else {
            unreachable!()
        };
        desired.resources.insert(
            "from-docker".to_string(),
            v1::Resource {
                resource: Some(cm),
                connection_details: BTreeMap::new(),
                ready: v1::Ready::True as i32,
            },
        );
        Ok(tonic::Response::new(v1::RunFunctionResponse {
            meta: Some(v1::ResponseMeta {
                tag: req.meta.map(|m| m.tag).unwrap_or_default(),
                ttl: None,
            }),
            desired: Some(desired),
            context: req.context,
            results: vec![v1::Result {
                severity: v1::Severity::Normal as i32,
                message: "served from a container".to_string(),
                reason: None,
                target: None,
            }],
            ..Default::default()
        }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if !std::env::args().any(|a| a == "--insecure") {
        eprintln!("xp-test-fn: only --insecure is supported");
        std::process::exit(2);
    }
    let address = "0.0.0.0:9443".parse().expect("an address");
    tonic::transport::Server::builder()
        .add_service(FunctionRunnerServiceServer::new(Function))
        .serve(address)
        .await
        .expect("serving");
}
