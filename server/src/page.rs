//! What a web page is to the server: the boxed future that answers it and the plain HTTP
//! response it answers with. The viewer's pages, the play page and an [`Extension`]'s pages
//! (`crate::host`) all answer in these terms.
//!
//! [`Extension`]: crate::Extension

use std::future::Future;
use std::pin::Pin;

use tonic::codegen::http;

/// A boxed future, as extensions return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A plain HTTP response (a web page or a file).
pub type PageResponse = http::Response<tonic::body::Body>;
