package dev.luosho.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * AgentService runs agents durably: every step is checkpointed under the session id, so a
 * run survives a crash of the caller or of the daemon and can be resumed.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class AgentServiceGrpc {

  private AgentServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "luosho.v1.AgentService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ExecuteRequest,
      dev.luosho.v1.ExecuteResponse> getExecuteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Execute",
      requestType = dev.luosho.v1.ExecuteRequest.class,
      responseType = dev.luosho.v1.ExecuteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ExecuteRequest,
      dev.luosho.v1.ExecuteResponse> getExecuteMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ExecuteRequest, dev.luosho.v1.ExecuteResponse> getExecuteMethod;
    if ((getExecuteMethod = AgentServiceGrpc.getExecuteMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getExecuteMethod = AgentServiceGrpc.getExecuteMethod) == null) {
          AgentServiceGrpc.getExecuteMethod = getExecuteMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ExecuteRequest, dev.luosho.v1.ExecuteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Execute"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ExecuteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ExecuteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Execute"))
              .build();
        }
      }
    }
    return getExecuteMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ResumeRequest,
      dev.luosho.v1.ResumeResponse> getResumeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Resume",
      requestType = dev.luosho.v1.ResumeRequest.class,
      responseType = dev.luosho.v1.ResumeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ResumeRequest,
      dev.luosho.v1.ResumeResponse> getResumeMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ResumeRequest, dev.luosho.v1.ResumeResponse> getResumeMethod;
    if ((getResumeMethod = AgentServiceGrpc.getResumeMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getResumeMethod = AgentServiceGrpc.getResumeMethod) == null) {
          AgentServiceGrpc.getResumeMethod = getResumeMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ResumeRequest, dev.luosho.v1.ResumeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Resume"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResumeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResumeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Resume"))
              .build();
        }
      }
    }
    return getResumeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.SubmitToolResultRequest,
      dev.luosho.v1.SubmitToolResultResponse> getSubmitToolResultMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SubmitToolResult",
      requestType = dev.luosho.v1.SubmitToolResultRequest.class,
      responseType = dev.luosho.v1.SubmitToolResultResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.SubmitToolResultRequest,
      dev.luosho.v1.SubmitToolResultResponse> getSubmitToolResultMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.SubmitToolResultRequest, dev.luosho.v1.SubmitToolResultResponse> getSubmitToolResultMethod;
    if ((getSubmitToolResultMethod = AgentServiceGrpc.getSubmitToolResultMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getSubmitToolResultMethod = AgentServiceGrpc.getSubmitToolResultMethod) == null) {
          AgentServiceGrpc.getSubmitToolResultMethod = getSubmitToolResultMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.SubmitToolResultRequest, dev.luosho.v1.SubmitToolResultResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SubmitToolResult"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.SubmitToolResultRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.SubmitToolResultResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("SubmitToolResult"))
              .build();
        }
      }
    }
    return getSubmitToolResultMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.CancelRequest,
      dev.luosho.v1.CancelResponse> getCancelMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Cancel",
      requestType = dev.luosho.v1.CancelRequest.class,
      responseType = dev.luosho.v1.CancelResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.CancelRequest,
      dev.luosho.v1.CancelResponse> getCancelMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.CancelRequest, dev.luosho.v1.CancelResponse> getCancelMethod;
    if ((getCancelMethod = AgentServiceGrpc.getCancelMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getCancelMethod = AgentServiceGrpc.getCancelMethod) == null) {
          AgentServiceGrpc.getCancelMethod = getCancelMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.CancelRequest, dev.luosho.v1.CancelResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Cancel"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CancelRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CancelResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Cancel"))
              .build();
        }
      }
    }
    return getCancelMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.GetSessionRequest,
      dev.luosho.v1.GetSessionResponse> getGetSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSession",
      requestType = dev.luosho.v1.GetSessionRequest.class,
      responseType = dev.luosho.v1.GetSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.GetSessionRequest,
      dev.luosho.v1.GetSessionResponse> getGetSessionMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.GetSessionRequest, dev.luosho.v1.GetSessionResponse> getGetSessionMethod;
    if ((getGetSessionMethod = AgentServiceGrpc.getGetSessionMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getGetSessionMethod = AgentServiceGrpc.getGetSessionMethod) == null) {
          AgentServiceGrpc.getGetSessionMethod = getGetSessionMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.GetSessionRequest, dev.luosho.v1.GetSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.GetSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.GetSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("GetSession"))
              .build();
        }
      }
    }
    return getGetSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ListSessionsRequest,
      dev.luosho.v1.ListSessionsResponse> getListSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessions",
      requestType = dev.luosho.v1.ListSessionsRequest.class,
      responseType = dev.luosho.v1.ListSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ListSessionsRequest,
      dev.luosho.v1.ListSessionsResponse> getListSessionsMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ListSessionsRequest, dev.luosho.v1.ListSessionsResponse> getListSessionsMethod;
    if ((getListSessionsMethod = AgentServiceGrpc.getListSessionsMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListSessionsMethod = AgentServiceGrpc.getListSessionsMethod) == null) {
          AgentServiceGrpc.getListSessionsMethod = getListSessionsMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ListSessionsRequest, dev.luosho.v1.ListSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListSessions"))
              .build();
        }
      }
    }
    return getListSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.DeleteSessionRequest,
      dev.luosho.v1.DeleteSessionResponse> getDeleteSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSession",
      requestType = dev.luosho.v1.DeleteSessionRequest.class,
      responseType = dev.luosho.v1.DeleteSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.DeleteSessionRequest,
      dev.luosho.v1.DeleteSessionResponse> getDeleteSessionMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.DeleteSessionRequest, dev.luosho.v1.DeleteSessionResponse> getDeleteSessionMethod;
    if ((getDeleteSessionMethod = AgentServiceGrpc.getDeleteSessionMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getDeleteSessionMethod = AgentServiceGrpc.getDeleteSessionMethod) == null) {
          AgentServiceGrpc.getDeleteSessionMethod = getDeleteSessionMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.DeleteSessionRequest, dev.luosho.v1.DeleteSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DeleteSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DeleteSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("DeleteSession"))
              .build();
        }
      }
    }
    return getDeleteSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ResolveRequest,
      dev.luosho.v1.ResolveResponse> getResolveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Resolve",
      requestType = dev.luosho.v1.ResolveRequest.class,
      responseType = dev.luosho.v1.ResolveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ResolveRequest,
      dev.luosho.v1.ResolveResponse> getResolveMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ResolveRequest, dev.luosho.v1.ResolveResponse> getResolveMethod;
    if ((getResolveMethod = AgentServiceGrpc.getResolveMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getResolveMethod = AgentServiceGrpc.getResolveMethod) == null) {
          AgentServiceGrpc.getResolveMethod = getResolveMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ResolveRequest, dev.luosho.v1.ResolveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Resolve"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResolveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResolveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Resolve"))
              .build();
        }
      }
    }
    return getResolveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ListApprovalsRequest,
      dev.luosho.v1.ListApprovalsResponse> getListApprovalsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListApprovals",
      requestType = dev.luosho.v1.ListApprovalsRequest.class,
      responseType = dev.luosho.v1.ListApprovalsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ListApprovalsRequest,
      dev.luosho.v1.ListApprovalsResponse> getListApprovalsMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ListApprovalsRequest, dev.luosho.v1.ListApprovalsResponse> getListApprovalsMethod;
    if ((getListApprovalsMethod = AgentServiceGrpc.getListApprovalsMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListApprovalsMethod = AgentServiceGrpc.getListApprovalsMethod) == null) {
          AgentServiceGrpc.getListApprovalsMethod = getListApprovalsMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ListApprovalsRequest, dev.luosho.v1.ListApprovalsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListApprovals"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListApprovalsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListApprovalsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListApprovals"))
              .build();
        }
      }
    }
    return getListApprovalsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.HistoryRequest,
      dev.luosho.v1.HistoryResponse> getHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "History",
      requestType = dev.luosho.v1.HistoryRequest.class,
      responseType = dev.luosho.v1.HistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.HistoryRequest,
      dev.luosho.v1.HistoryResponse> getHistoryMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.HistoryRequest, dev.luosho.v1.HistoryResponse> getHistoryMethod;
    if ((getHistoryMethod = AgentServiceGrpc.getHistoryMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getHistoryMethod = AgentServiceGrpc.getHistoryMethod) == null) {
          AgentServiceGrpc.getHistoryMethod = getHistoryMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.HistoryRequest, dev.luosho.v1.HistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "History"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.HistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.HistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("History"))
              .build();
        }
      }
    }
    return getHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ForkRequest,
      dev.luosho.v1.ForkResponse> getForkMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Fork",
      requestType = dev.luosho.v1.ForkRequest.class,
      responseType = dev.luosho.v1.ForkResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ForkRequest,
      dev.luosho.v1.ForkResponse> getForkMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ForkRequest, dev.luosho.v1.ForkResponse> getForkMethod;
    if ((getForkMethod = AgentServiceGrpc.getForkMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getForkMethod = AgentServiceGrpc.getForkMethod) == null) {
          AgentServiceGrpc.getForkMethod = getForkMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ForkRequest, dev.luosho.v1.ForkResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Fork"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ForkRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ForkResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Fork"))
              .build();
        }
      }
    }
    return getForkMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.CompareRequest,
      dev.luosho.v1.CompareResponse> getCompareMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Compare",
      requestType = dev.luosho.v1.CompareRequest.class,
      responseType = dev.luosho.v1.CompareResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.CompareRequest,
      dev.luosho.v1.CompareResponse> getCompareMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.CompareRequest, dev.luosho.v1.CompareResponse> getCompareMethod;
    if ((getCompareMethod = AgentServiceGrpc.getCompareMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getCompareMethod = AgentServiceGrpc.getCompareMethod) == null) {
          AgentServiceGrpc.getCompareMethod = getCompareMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.CompareRequest, dev.luosho.v1.CompareResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Compare"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CompareRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CompareResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Compare"))
              .build();
        }
      }
    }
    return getCompareMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.WatchRequest,
      dev.luosho.v1.WatchResponse> getWatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Watch",
      requestType = dev.luosho.v1.WatchRequest.class,
      responseType = dev.luosho.v1.WatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.WatchRequest,
      dev.luosho.v1.WatchResponse> getWatchMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.WatchRequest, dev.luosho.v1.WatchResponse> getWatchMethod;
    if ((getWatchMethod = AgentServiceGrpc.getWatchMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getWatchMethod = AgentServiceGrpc.getWatchMethod) == null) {
          AgentServiceGrpc.getWatchMethod = getWatchMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.WatchRequest, dev.luosho.v1.WatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Watch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.WatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.WatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Watch"))
              .build();
        }
      }
    }
    return getWatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ListMcpServersRequest,
      dev.luosho.v1.ListMcpServersResponse> getListMcpServersMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMcpServers",
      requestType = dev.luosho.v1.ListMcpServersRequest.class,
      responseType = dev.luosho.v1.ListMcpServersResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ListMcpServersRequest,
      dev.luosho.v1.ListMcpServersResponse> getListMcpServersMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ListMcpServersRequest, dev.luosho.v1.ListMcpServersResponse> getListMcpServersMethod;
    if ((getListMcpServersMethod = AgentServiceGrpc.getListMcpServersMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListMcpServersMethod = AgentServiceGrpc.getListMcpServersMethod) == null) {
          AgentServiceGrpc.getListMcpServersMethod = getListMcpServersMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ListMcpServersRequest, dev.luosho.v1.ListMcpServersResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMcpServers"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListMcpServersRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListMcpServersResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListMcpServers"))
              .build();
        }
      }
    }
    return getListMcpServersMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.DequeueInputRequest,
      dev.luosho.v1.DequeueInputResponse> getDequeueInputMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DequeueInput",
      requestType = dev.luosho.v1.DequeueInputRequest.class,
      responseType = dev.luosho.v1.DequeueInputResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.DequeueInputRequest,
      dev.luosho.v1.DequeueInputResponse> getDequeueInputMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.DequeueInputRequest, dev.luosho.v1.DequeueInputResponse> getDequeueInputMethod;
    if ((getDequeueInputMethod = AgentServiceGrpc.getDequeueInputMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getDequeueInputMethod = AgentServiceGrpc.getDequeueInputMethod) == null) {
          AgentServiceGrpc.getDequeueInputMethod = getDequeueInputMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.DequeueInputRequest, dev.luosho.v1.DequeueInputResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DequeueInput"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DequeueInputRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DequeueInputResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("DequeueInput"))
              .build();
        }
      }
    }
    return getDequeueInputMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.CompactRequest,
      dev.luosho.v1.CompactResponse> getCompactMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Compact",
      requestType = dev.luosho.v1.CompactRequest.class,
      responseType = dev.luosho.v1.CompactResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.CompactRequest,
      dev.luosho.v1.CompactResponse> getCompactMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.CompactRequest, dev.luosho.v1.CompactResponse> getCompactMethod;
    if ((getCompactMethod = AgentServiceGrpc.getCompactMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getCompactMethod = AgentServiceGrpc.getCompactMethod) == null) {
          AgentServiceGrpc.getCompactMethod = getCompactMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.CompactRequest, dev.luosho.v1.CompactResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Compact"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CompactRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CompactResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Compact"))
              .build();
        }
      }
    }
    return getCompactMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.CreateScheduleRequest,
      dev.luosho.v1.CreateScheduleResponse> getCreateScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateSchedule",
      requestType = dev.luosho.v1.CreateScheduleRequest.class,
      responseType = dev.luosho.v1.CreateScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.CreateScheduleRequest,
      dev.luosho.v1.CreateScheduleResponse> getCreateScheduleMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.CreateScheduleRequest, dev.luosho.v1.CreateScheduleResponse> getCreateScheduleMethod;
    if ((getCreateScheduleMethod = AgentServiceGrpc.getCreateScheduleMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getCreateScheduleMethod = AgentServiceGrpc.getCreateScheduleMethod) == null) {
          AgentServiceGrpc.getCreateScheduleMethod = getCreateScheduleMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.CreateScheduleRequest, dev.luosho.v1.CreateScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CreateScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.CreateScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("CreateSchedule"))
              .build();
        }
      }
    }
    return getCreateScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ListSchedulesRequest,
      dev.luosho.v1.ListSchedulesResponse> getListSchedulesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSchedules",
      requestType = dev.luosho.v1.ListSchedulesRequest.class,
      responseType = dev.luosho.v1.ListSchedulesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ListSchedulesRequest,
      dev.luosho.v1.ListSchedulesResponse> getListSchedulesMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ListSchedulesRequest, dev.luosho.v1.ListSchedulesResponse> getListSchedulesMethod;
    if ((getListSchedulesMethod = AgentServiceGrpc.getListSchedulesMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListSchedulesMethod = AgentServiceGrpc.getListSchedulesMethod) == null) {
          AgentServiceGrpc.getListSchedulesMethod = getListSchedulesMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ListSchedulesRequest, dev.luosho.v1.ListSchedulesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSchedules"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListSchedulesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ListSchedulesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListSchedules"))
              .build();
        }
      }
    }
    return getListSchedulesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.PauseScheduleRequest,
      dev.luosho.v1.PauseScheduleResponse> getPauseScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PauseSchedule",
      requestType = dev.luosho.v1.PauseScheduleRequest.class,
      responseType = dev.luosho.v1.PauseScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.PauseScheduleRequest,
      dev.luosho.v1.PauseScheduleResponse> getPauseScheduleMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.PauseScheduleRequest, dev.luosho.v1.PauseScheduleResponse> getPauseScheduleMethod;
    if ((getPauseScheduleMethod = AgentServiceGrpc.getPauseScheduleMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getPauseScheduleMethod = AgentServiceGrpc.getPauseScheduleMethod) == null) {
          AgentServiceGrpc.getPauseScheduleMethod = getPauseScheduleMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.PauseScheduleRequest, dev.luosho.v1.PauseScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PauseSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.PauseScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.PauseScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("PauseSchedule"))
              .build();
        }
      }
    }
    return getPauseScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.ResumeScheduleRequest,
      dev.luosho.v1.ResumeScheduleResponse> getResumeScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ResumeSchedule",
      requestType = dev.luosho.v1.ResumeScheduleRequest.class,
      responseType = dev.luosho.v1.ResumeScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.ResumeScheduleRequest,
      dev.luosho.v1.ResumeScheduleResponse> getResumeScheduleMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.ResumeScheduleRequest, dev.luosho.v1.ResumeScheduleResponse> getResumeScheduleMethod;
    if ((getResumeScheduleMethod = AgentServiceGrpc.getResumeScheduleMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getResumeScheduleMethod = AgentServiceGrpc.getResumeScheduleMethod) == null) {
          AgentServiceGrpc.getResumeScheduleMethod = getResumeScheduleMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.ResumeScheduleRequest, dev.luosho.v1.ResumeScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ResumeSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResumeScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.ResumeScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ResumeSchedule"))
              .build();
        }
      }
    }
    return getResumeScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.DeleteScheduleRequest,
      dev.luosho.v1.DeleteScheduleResponse> getDeleteScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSchedule",
      requestType = dev.luosho.v1.DeleteScheduleRequest.class,
      responseType = dev.luosho.v1.DeleteScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.DeleteScheduleRequest,
      dev.luosho.v1.DeleteScheduleResponse> getDeleteScheduleMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.DeleteScheduleRequest, dev.luosho.v1.DeleteScheduleResponse> getDeleteScheduleMethod;
    if ((getDeleteScheduleMethod = AgentServiceGrpc.getDeleteScheduleMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getDeleteScheduleMethod = AgentServiceGrpc.getDeleteScheduleMethod) == null) {
          AgentServiceGrpc.getDeleteScheduleMethod = getDeleteScheduleMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.DeleteScheduleRequest, dev.luosho.v1.DeleteScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DeleteScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.DeleteScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("DeleteSchedule"))
              .build();
        }
      }
    }
    return getDeleteScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.luosho.v1.TriggerScheduleRequest,
      dev.luosho.v1.TriggerScheduleResponse> getTriggerScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "TriggerSchedule",
      requestType = dev.luosho.v1.TriggerScheduleRequest.class,
      responseType = dev.luosho.v1.TriggerScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.luosho.v1.TriggerScheduleRequest,
      dev.luosho.v1.TriggerScheduleResponse> getTriggerScheduleMethod() {
    io.grpc.MethodDescriptor<dev.luosho.v1.TriggerScheduleRequest, dev.luosho.v1.TriggerScheduleResponse> getTriggerScheduleMethod;
    if ((getTriggerScheduleMethod = AgentServiceGrpc.getTriggerScheduleMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getTriggerScheduleMethod = AgentServiceGrpc.getTriggerScheduleMethod) == null) {
          AgentServiceGrpc.getTriggerScheduleMethod = getTriggerScheduleMethod =
              io.grpc.MethodDescriptor.<dev.luosho.v1.TriggerScheduleRequest, dev.luosho.v1.TriggerScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "TriggerSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.TriggerScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.luosho.v1.TriggerScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("TriggerSchedule"))
              .build();
        }
      }
    }
    return getTriggerScheduleMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static AgentServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceStub>() {
        @java.lang.Override
        public AgentServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceStub(channel, callOptions);
        }
      };
    return AgentServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static AgentServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingV2Stub>() {
        @java.lang.Override
        public AgentServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return AgentServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static AgentServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingStub>() {
        @java.lang.Override
        public AgentServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceBlockingStub(channel, callOptions);
        }
      };
    return AgentServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static AgentServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceFutureStub>() {
        @java.lang.Override
        public AgentServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceFutureStub(channel, callOptions);
        }
      };
    return AgentServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Start, continue or resume the run of session_id with input. Streams the run's events;
     * the stream ends after run.done, or with an error status.
     * </pre>
     */
    default void execute(dev.luosho.v1.ExecuteRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ExecuteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExecuteMethod(), responseObserver);
    }

    /**
     * <pre>
     * Finish an interrupted (in-progress) run with no new input. A finished session ends the
     * stream at once with no run.
     * </pre>
     */
    default void resume(dev.luosho.v1.ResumeRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Record the result of a tool call that a running run handed to the caller (tool.call).
     * </pre>
     */
    default void submitToolResult(dev.luosho.v1.SubmitToolResultRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.SubmitToolResultResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSubmitToolResultMethod(), responseObserver);
    }

    /**
     * <pre>
     * Abort the session's running run: pending tool calls get a "cancelled" result and the
     * checkpoint stays in-progress with finish reason ABORTED.
     * </pre>
     */
    default void cancel(dev.luosho.v1.CancelRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CancelResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelMethod(), responseObserver);
    }

    /**
     * <pre>
     * The session's latest checkpoint.
     * </pre>
     */
    default void getSession(dev.luosho.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Sessions, optionally filtered by status, ordered by session id, paged.
     * </pre>
     */
    default void listSessions(dev.luosho.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Delete a session's checkpoint (and its history unless keep_history).
     * </pre>
     */
    default void deleteSession(dev.luosho.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Decide a pending approval and continue the run: streams the continued run's events.
     * </pre>
     */
    default void resolve(dev.luosho.v1.ResolveRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResolveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResolveMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pending approvals, optionally of one session, oldest first, paged.
     * </pre>
     */
    default void listApprovals(dev.luosho.v1.ListApprovalsRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListApprovalsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListApprovalsMethod(), responseObserver);
    }

    /**
     * <pre>
     * A session's checkpoint history, newest first, paged.
     * </pre>
     */
    default void history(dev.luosho.v1.HistoryRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.HistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * A new session from a step of another's history, with a patch; resume it like any
     * unfinished run.
     * </pre>
     */
    default void fork(dev.luosho.v1.ForkRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ForkResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getForkMethod(), responseObserver);
    }

    /**
     * <pre>
     * Two sessions' trajectories side by side.
     * </pre>
     */
    default void compare(dev.luosho.v1.CompareRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CompareResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompareMethod(), responseObserver);
    }

    /**
     * <pre>
     * A session's events after a cursor: what the event log keeps, then live events.
     * </pre>
     */
    default void watch(dev.luosho.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * The daemon's MCP servers (daemon tools, [mcp_servers.NAME] of its configuration): the
     * state of each connection and its tools. Secrets are never shown.
     * </pre>
     */
    default void listMcpServers(dev.luosho.v1.ListMcpServersRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListMcpServersResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMcpServersMethod(), responseObserver);
    }

    /**
     * <pre>
     * Remove one input queued on a busy session (ExecuteRequest.if_busy): it will not run,
     * and the stream of the Execute that queued it ends with ABORTED/INPUT_DEQUEUED.
     * </pre>
     */
    default void dequeueInput(dev.luosho.v1.DequeueInputRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DequeueInputResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDequeueInputMethod(), responseObserver);
    }

    /**
     * <pre>
     * Compact the session's transcript by hand (R85), as far as its agent's protected tail
     * allows: old tool results become a marker, then the oldest turns one summary. Refused
     * with SESSION_BUSY while a run holds the session. The transcript itself stays whole.
     * </pre>
     */
    default void compact(dev.luosho.v1.CompactRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CompactResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompactMethod(), responseObserver);
    }

    /**
     * <pre>
     * Store a new schedule; ALREADY_EXISTS/SCHEDULE_EXISTS when one has its name.
     * </pre>
     */
    default void createSchedule(dev.luosho.v1.CreateScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CreateScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateScheduleMethod(), responseObserver);
    }

    /**
     * <pre>
     * Every schedule, ordered by name.
     * </pre>
     */
    default void listSchedules(dev.luosho.v1.ListSchedulesRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListSchedulesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSchedulesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Stop a schedule's fires until ResumeSchedule; fires due meanwhile are not run.
     * </pre>
     */
    default void pauseSchedule(dev.luosho.v1.PauseScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.PauseScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPauseScheduleMethod(), responseObserver);
    }

    /**
     * <pre>
     * Let a paused schedule fire again, from its next fire time after now.
     * </pre>
     */
    default void resumeSchedule(dev.luosho.v1.ResumeScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeScheduleMethod(), responseObserver);
    }

    /**
     * <pre>
     * Delete a schedule; runs it already started go on.
     * </pre>
     */
    default void deleteSchedule(dev.luosho.v1.DeleteScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteScheduleMethod(), responseObserver);
    }

    /**
     * <pre>
     * Fire a schedule now, once, outside its times (paused or not); its times are unchanged.
     * </pre>
     */
    default void triggerSchedule(dev.luosho.v1.TriggerScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.TriggerScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getTriggerScheduleMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service AgentService.
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public static abstract class AgentServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return AgentServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service AgentService.
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public static final class AgentServiceStub
      extends io.grpc.stub.AbstractAsyncStub<AgentServiceStub> {
    private AgentServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Start, continue or resume the run of session_id with input. Streams the run's events;
     * the stream ends after run.done, or with an error status.
     * </pre>
     */
    public void execute(dev.luosho.v1.ExecuteRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ExecuteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getExecuteMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Finish an interrupted (in-progress) run with no new input. A finished session ends the
     * stream at once with no run.
     * </pre>
     */
    public void resume(dev.luosho.v1.ResumeRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getResumeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Record the result of a tool call that a running run handed to the caller (tool.call).
     * </pre>
     */
    public void submitToolResult(dev.luosho.v1.SubmitToolResultRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.SubmitToolResultResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSubmitToolResultMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Abort the session's running run: pending tool calls get a "cancelled" result and the
     * checkpoint stays in-progress with finish reason ABORTED.
     * </pre>
     */
    public void cancel(dev.luosho.v1.CancelRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CancelResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * The session's latest checkpoint.
     * </pre>
     */
    public void getSession(dev.luosho.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Sessions, optionally filtered by status, ordered by session id, paged.
     * </pre>
     */
    public void listSessions(dev.luosho.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Delete a session's checkpoint (and its history unless keep_history).
     * </pre>
     */
    public void deleteSession(dev.luosho.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Decide a pending approval and continue the run: streams the continued run's events.
     * </pre>
     */
    public void resolve(dev.luosho.v1.ResolveRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResolveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getResolveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pending approvals, optionally of one session, oldest first, paged.
     * </pre>
     */
    public void listApprovals(dev.luosho.v1.ListApprovalsRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListApprovalsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListApprovalsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * A session's checkpoint history, newest first, paged.
     * </pre>
     */
    public void history(dev.luosho.v1.HistoryRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.HistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * A new session from a step of another's history, with a patch; resume it like any
     * unfinished run.
     * </pre>
     */
    public void fork(dev.luosho.v1.ForkRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ForkResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getForkMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Two sessions' trajectories side by side.
     * </pre>
     */
    public void compare(dev.luosho.v1.CompareRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CompareResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompareMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * A session's events after a cursor: what the event log keeps, then live events.
     * </pre>
     */
    public void watch(dev.luosho.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * The daemon's MCP servers (daemon tools, [mcp_servers.NAME] of its configuration): the
     * state of each connection and its tools. Secrets are never shown.
     * </pre>
     */
    public void listMcpServers(dev.luosho.v1.ListMcpServersRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListMcpServersResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMcpServersMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Remove one input queued on a busy session (ExecuteRequest.if_busy): it will not run,
     * and the stream of the Execute that queued it ends with ABORTED/INPUT_DEQUEUED.
     * </pre>
     */
    public void dequeueInput(dev.luosho.v1.DequeueInputRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DequeueInputResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDequeueInputMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Compact the session's transcript by hand (R85), as far as its agent's protected tail
     * allows: old tool results become a marker, then the oldest turns one summary. Refused
     * with SESSION_BUSY while a run holds the session. The transcript itself stays whole.
     * </pre>
     */
    public void compact(dev.luosho.v1.CompactRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CompactResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompactMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Store a new schedule; ALREADY_EXISTS/SCHEDULE_EXISTS when one has its name.
     * </pre>
     */
    public void createSchedule(dev.luosho.v1.CreateScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.CreateScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Every schedule, ordered by name.
     * </pre>
     */
    public void listSchedules(dev.luosho.v1.ListSchedulesRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ListSchedulesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSchedulesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Stop a schedule's fires until ResumeSchedule; fires due meanwhile are not run.
     * </pre>
     */
    public void pauseSchedule(dev.luosho.v1.PauseScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.PauseScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPauseScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Let a paused schedule fire again, from its next fire time after now.
     * </pre>
     */
    public void resumeSchedule(dev.luosho.v1.ResumeScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResumeScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Delete a schedule; runs it already started go on.
     * </pre>
     */
    public void deleteSchedule(dev.luosho.v1.DeleteScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Fire a schedule now, once, outside its times (paused or not); its times are unchanged.
     * </pre>
     */
    public void triggerSchedule(dev.luosho.v1.TriggerScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.luosho.v1.TriggerScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getTriggerScheduleMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service AgentService.
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public static final class AgentServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<AgentServiceBlockingV2Stub> {
    private AgentServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Start, continue or resume the run of session_id with input. Streams the run's events;
     * the stream ends after run.done, or with an error status.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.luosho.v1.ExecuteResponse>
        execute(dev.luosho.v1.ExecuteRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getExecuteMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Finish an interrupted (in-progress) run with no new input. A finished session ends the
     * stream at once with no run.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.luosho.v1.ResumeResponse>
        resume(dev.luosho.v1.ResumeRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getResumeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Record the result of a tool call that a running run handed to the caller (tool.call).
     * </pre>
     */
    public dev.luosho.v1.SubmitToolResultResponse submitToolResult(dev.luosho.v1.SubmitToolResultRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSubmitToolResultMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Abort the session's running run: pending tool calls get a "cancelled" result and the
     * checkpoint stays in-progress with finish reason ABORTED.
     * </pre>
     */
    public dev.luosho.v1.CancelResponse cancel(dev.luosho.v1.CancelRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCancelMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The session's latest checkpoint.
     * </pre>
     */
    public dev.luosho.v1.GetSessionResponse getSession(dev.luosho.v1.GetSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sessions, optionally filtered by status, ordered by session id, paged.
     * </pre>
     */
    public dev.luosho.v1.ListSessionsResponse listSessions(dev.luosho.v1.ListSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete a session's checkpoint (and its history unless keep_history).
     * </pre>
     */
    public dev.luosho.v1.DeleteSessionResponse deleteSession(dev.luosho.v1.DeleteSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Decide a pending approval and continue the run: streams the continued run's events.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.luosho.v1.ResolveResponse>
        resolve(dev.luosho.v1.ResolveRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getResolveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pending approvals, optionally of one session, oldest first, paged.
     * </pre>
     */
    public dev.luosho.v1.ListApprovalsResponse listApprovals(dev.luosho.v1.ListApprovalsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListApprovalsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A session's checkpoint history, newest first, paged.
     * </pre>
     */
    public dev.luosho.v1.HistoryResponse history(dev.luosho.v1.HistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A new session from a step of another's history, with a patch; resume it like any
     * unfinished run.
     * </pre>
     */
    public dev.luosho.v1.ForkResponse fork(dev.luosho.v1.ForkRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getForkMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Two sessions' trajectories side by side.
     * </pre>
     */
    public dev.luosho.v1.CompareResponse compare(dev.luosho.v1.CompareRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompareMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A session's events after a cursor: what the event log keeps, then live events.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.luosho.v1.WatchResponse>
        watch(dev.luosho.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The daemon's MCP servers (daemon tools, [mcp_servers.NAME] of its configuration): the
     * state of each connection and its tools. Secrets are never shown.
     * </pre>
     */
    public dev.luosho.v1.ListMcpServersResponse listMcpServers(dev.luosho.v1.ListMcpServersRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMcpServersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Remove one input queued on a busy session (ExecuteRequest.if_busy): it will not run,
     * and the stream of the Execute that queued it ends with ABORTED/INPUT_DEQUEUED.
     * </pre>
     */
    public dev.luosho.v1.DequeueInputResponse dequeueInput(dev.luosho.v1.DequeueInputRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDequeueInputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compact the session's transcript by hand (R85), as far as its agent's protected tail
     * allows: old tool results become a marker, then the oldest turns one summary. Refused
     * with SESSION_BUSY while a run holds the session. The transcript itself stays whole.
     * </pre>
     */
    public dev.luosho.v1.CompactResponse compact(dev.luosho.v1.CompactRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Store a new schedule; ALREADY_EXISTS/SCHEDULE_EXISTS when one has its name.
     * </pre>
     */
    public dev.luosho.v1.CreateScheduleResponse createSchedule(dev.luosho.v1.CreateScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every schedule, ordered by name.
     * </pre>
     */
    public dev.luosho.v1.ListSchedulesResponse listSchedules(dev.luosho.v1.ListSchedulesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSchedulesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stop a schedule's fires until ResumeSchedule; fires due meanwhile are not run.
     * </pre>
     */
    public dev.luosho.v1.PauseScheduleResponse pauseSchedule(dev.luosho.v1.PauseScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPauseScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Let a paused schedule fire again, from its next fire time after now.
     * </pre>
     */
    public dev.luosho.v1.ResumeScheduleResponse resumeSchedule(dev.luosho.v1.ResumeScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResumeScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete a schedule; runs it already started go on.
     * </pre>
     */
    public dev.luosho.v1.DeleteScheduleResponse deleteSchedule(dev.luosho.v1.DeleteScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Fire a schedule now, once, outside its times (paused or not); its times are unchanged.
     * </pre>
     */
    public dev.luosho.v1.TriggerScheduleResponse triggerSchedule(dev.luosho.v1.TriggerScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getTriggerScheduleMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service AgentService.
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public static final class AgentServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<AgentServiceBlockingStub> {
    private AgentServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Start, continue or resume the run of session_id with input. Streams the run's events;
     * the stream ends after run.done, or with an error status.
     * </pre>
     */
    public java.util.Iterator<dev.luosho.v1.ExecuteResponse> execute(
        dev.luosho.v1.ExecuteRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getExecuteMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Finish an interrupted (in-progress) run with no new input. A finished session ends the
     * stream at once with no run.
     * </pre>
     */
    public java.util.Iterator<dev.luosho.v1.ResumeResponse> resume(
        dev.luosho.v1.ResumeRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getResumeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Record the result of a tool call that a running run handed to the caller (tool.call).
     * </pre>
     */
    public dev.luosho.v1.SubmitToolResultResponse submitToolResult(dev.luosho.v1.SubmitToolResultRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSubmitToolResultMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Abort the session's running run: pending tool calls get a "cancelled" result and the
     * checkpoint stays in-progress with finish reason ABORTED.
     * </pre>
     */
    public dev.luosho.v1.CancelResponse cancel(dev.luosho.v1.CancelRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The session's latest checkpoint.
     * </pre>
     */
    public dev.luosho.v1.GetSessionResponse getSession(dev.luosho.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sessions, optionally filtered by status, ordered by session id, paged.
     * </pre>
     */
    public dev.luosho.v1.ListSessionsResponse listSessions(dev.luosho.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete a session's checkpoint (and its history unless keep_history).
     * </pre>
     */
    public dev.luosho.v1.DeleteSessionResponse deleteSession(dev.luosho.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Decide a pending approval and continue the run: streams the continued run's events.
     * </pre>
     */
    public java.util.Iterator<dev.luosho.v1.ResolveResponse> resolve(
        dev.luosho.v1.ResolveRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getResolveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pending approvals, optionally of one session, oldest first, paged.
     * </pre>
     */
    public dev.luosho.v1.ListApprovalsResponse listApprovals(dev.luosho.v1.ListApprovalsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListApprovalsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A session's checkpoint history, newest first, paged.
     * </pre>
     */
    public dev.luosho.v1.HistoryResponse history(dev.luosho.v1.HistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A new session from a step of another's history, with a patch; resume it like any
     * unfinished run.
     * </pre>
     */
    public dev.luosho.v1.ForkResponse fork(dev.luosho.v1.ForkRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getForkMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Two sessions' trajectories side by side.
     * </pre>
     */
    public dev.luosho.v1.CompareResponse compare(dev.luosho.v1.CompareRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompareMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A session's events after a cursor: what the event log keeps, then live events.
     * </pre>
     */
    public java.util.Iterator<dev.luosho.v1.WatchResponse> watch(
        dev.luosho.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The daemon's MCP servers (daemon tools, [mcp_servers.NAME] of its configuration): the
     * state of each connection and its tools. Secrets are never shown.
     * </pre>
     */
    public dev.luosho.v1.ListMcpServersResponse listMcpServers(dev.luosho.v1.ListMcpServersRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMcpServersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Remove one input queued on a busy session (ExecuteRequest.if_busy): it will not run,
     * and the stream of the Execute that queued it ends with ABORTED/INPUT_DEQUEUED.
     * </pre>
     */
    public dev.luosho.v1.DequeueInputResponse dequeueInput(dev.luosho.v1.DequeueInputRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDequeueInputMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compact the session's transcript by hand (R85), as far as its agent's protected tail
     * allows: old tool results become a marker, then the oldest turns one summary. Refused
     * with SESSION_BUSY while a run holds the session. The transcript itself stays whole.
     * </pre>
     */
    public dev.luosho.v1.CompactResponse compact(dev.luosho.v1.CompactRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Store a new schedule; ALREADY_EXISTS/SCHEDULE_EXISTS when one has its name.
     * </pre>
     */
    public dev.luosho.v1.CreateScheduleResponse createSchedule(dev.luosho.v1.CreateScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Every schedule, ordered by name.
     * </pre>
     */
    public dev.luosho.v1.ListSchedulesResponse listSchedules(dev.luosho.v1.ListSchedulesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSchedulesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stop a schedule's fires until ResumeSchedule; fires due meanwhile are not run.
     * </pre>
     */
    public dev.luosho.v1.PauseScheduleResponse pauseSchedule(dev.luosho.v1.PauseScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPauseScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Let a paused schedule fire again, from its next fire time after now.
     * </pre>
     */
    public dev.luosho.v1.ResumeScheduleResponse resumeSchedule(dev.luosho.v1.ResumeScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResumeScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete a schedule; runs it already started go on.
     * </pre>
     */
    public dev.luosho.v1.DeleteScheduleResponse deleteSchedule(dev.luosho.v1.DeleteScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Fire a schedule now, once, outside its times (paused or not); its times are unchanged.
     * </pre>
     */
    public dev.luosho.v1.TriggerScheduleResponse triggerSchedule(dev.luosho.v1.TriggerScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getTriggerScheduleMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service AgentService.
   * <pre>
   * AgentService runs agents durably: every step is checkpointed under the session id, so a
   * run survives a crash of the caller or of the daemon and can be resumed.
   * </pre>
   */
  public static final class AgentServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<AgentServiceFutureStub> {
    private AgentServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Record the result of a tool call that a running run handed to the caller (tool.call).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.SubmitToolResultResponse> submitToolResult(
        dev.luosho.v1.SubmitToolResultRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSubmitToolResultMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Abort the session's running run: pending tool calls get a "cancelled" result and the
     * checkpoint stays in-progress with finish reason ABORTED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.CancelResponse> cancel(
        dev.luosho.v1.CancelRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * The session's latest checkpoint.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.GetSessionResponse> getSession(
        dev.luosho.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Sessions, optionally filtered by status, ordered by session id, paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ListSessionsResponse> listSessions(
        dev.luosho.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Delete a session's checkpoint (and its history unless keep_history).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.DeleteSessionResponse> deleteSession(
        dev.luosho.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pending approvals, optionally of one session, oldest first, paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ListApprovalsResponse> listApprovals(
        dev.luosho.v1.ListApprovalsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListApprovalsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * A session's checkpoint history, newest first, paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.HistoryResponse> history(
        dev.luosho.v1.HistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * A new session from a step of another's history, with a patch; resume it like any
     * unfinished run.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ForkResponse> fork(
        dev.luosho.v1.ForkRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getForkMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Two sessions' trajectories side by side.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.CompareResponse> compare(
        dev.luosho.v1.CompareRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompareMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * The daemon's MCP servers (daemon tools, [mcp_servers.NAME] of its configuration): the
     * state of each connection and its tools. Secrets are never shown.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ListMcpServersResponse> listMcpServers(
        dev.luosho.v1.ListMcpServersRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMcpServersMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Remove one input queued on a busy session (ExecuteRequest.if_busy): it will not run,
     * and the stream of the Execute that queued it ends with ABORTED/INPUT_DEQUEUED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.DequeueInputResponse> dequeueInput(
        dev.luosho.v1.DequeueInputRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDequeueInputMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Compact the session's transcript by hand (R85), as far as its agent's protected tail
     * allows: old tool results become a marker, then the oldest turns one summary. Refused
     * with SESSION_BUSY while a run holds the session. The transcript itself stays whole.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.CompactResponse> compact(
        dev.luosho.v1.CompactRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompactMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Store a new schedule; ALREADY_EXISTS/SCHEDULE_EXISTS when one has its name.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.CreateScheduleResponse> createSchedule(
        dev.luosho.v1.CreateScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateScheduleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Every schedule, ordered by name.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ListSchedulesResponse> listSchedules(
        dev.luosho.v1.ListSchedulesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSchedulesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Stop a schedule's fires until ResumeSchedule; fires due meanwhile are not run.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.PauseScheduleResponse> pauseSchedule(
        dev.luosho.v1.PauseScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPauseScheduleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Let a paused schedule fire again, from its next fire time after now.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.ResumeScheduleResponse> resumeSchedule(
        dev.luosho.v1.ResumeScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResumeScheduleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Delete a schedule; runs it already started go on.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.DeleteScheduleResponse> deleteSchedule(
        dev.luosho.v1.DeleteScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteScheduleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Fire a schedule now, once, outside its times (paused or not); its times are unchanged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.luosho.v1.TriggerScheduleResponse> triggerSchedule(
        dev.luosho.v1.TriggerScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getTriggerScheduleMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_EXECUTE = 0;
  private static final int METHODID_RESUME = 1;
  private static final int METHODID_SUBMIT_TOOL_RESULT = 2;
  private static final int METHODID_CANCEL = 3;
  private static final int METHODID_GET_SESSION = 4;
  private static final int METHODID_LIST_SESSIONS = 5;
  private static final int METHODID_DELETE_SESSION = 6;
  private static final int METHODID_RESOLVE = 7;
  private static final int METHODID_LIST_APPROVALS = 8;
  private static final int METHODID_HISTORY = 9;
  private static final int METHODID_FORK = 10;
  private static final int METHODID_COMPARE = 11;
  private static final int METHODID_WATCH = 12;
  private static final int METHODID_LIST_MCP_SERVERS = 13;
  private static final int METHODID_DEQUEUE_INPUT = 14;
  private static final int METHODID_COMPACT = 15;
  private static final int METHODID_CREATE_SCHEDULE = 16;
  private static final int METHODID_LIST_SCHEDULES = 17;
  private static final int METHODID_PAUSE_SCHEDULE = 18;
  private static final int METHODID_RESUME_SCHEDULE = 19;
  private static final int METHODID_DELETE_SCHEDULE = 20;
  private static final int METHODID_TRIGGER_SCHEDULE = 21;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_EXECUTE:
          serviceImpl.execute((dev.luosho.v1.ExecuteRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ExecuteResponse>) responseObserver);
          break;
        case METHODID_RESUME:
          serviceImpl.resume((dev.luosho.v1.ResumeRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeResponse>) responseObserver);
          break;
        case METHODID_SUBMIT_TOOL_RESULT:
          serviceImpl.submitToolResult((dev.luosho.v1.SubmitToolResultRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.SubmitToolResultResponse>) responseObserver);
          break;
        case METHODID_CANCEL:
          serviceImpl.cancel((dev.luosho.v1.CancelRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.CancelResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION:
          serviceImpl.getSession((dev.luosho.v1.GetSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.GetSessionResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSIONS:
          serviceImpl.listSessions((dev.luosho.v1.ListSessionsRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ListSessionsResponse>) responseObserver);
          break;
        case METHODID_DELETE_SESSION:
          serviceImpl.deleteSession((dev.luosho.v1.DeleteSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteSessionResponse>) responseObserver);
          break;
        case METHODID_RESOLVE:
          serviceImpl.resolve((dev.luosho.v1.ResolveRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ResolveResponse>) responseObserver);
          break;
        case METHODID_LIST_APPROVALS:
          serviceImpl.listApprovals((dev.luosho.v1.ListApprovalsRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ListApprovalsResponse>) responseObserver);
          break;
        case METHODID_HISTORY:
          serviceImpl.history((dev.luosho.v1.HistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.HistoryResponse>) responseObserver);
          break;
        case METHODID_FORK:
          serviceImpl.fork((dev.luosho.v1.ForkRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ForkResponse>) responseObserver);
          break;
        case METHODID_COMPARE:
          serviceImpl.compare((dev.luosho.v1.CompareRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.CompareResponse>) responseObserver);
          break;
        case METHODID_WATCH:
          serviceImpl.watch((dev.luosho.v1.WatchRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.WatchResponse>) responseObserver);
          break;
        case METHODID_LIST_MCP_SERVERS:
          serviceImpl.listMcpServers((dev.luosho.v1.ListMcpServersRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ListMcpServersResponse>) responseObserver);
          break;
        case METHODID_DEQUEUE_INPUT:
          serviceImpl.dequeueInput((dev.luosho.v1.DequeueInputRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.DequeueInputResponse>) responseObserver);
          break;
        case METHODID_COMPACT:
          serviceImpl.compact((dev.luosho.v1.CompactRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.CompactResponse>) responseObserver);
          break;
        case METHODID_CREATE_SCHEDULE:
          serviceImpl.createSchedule((dev.luosho.v1.CreateScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.CreateScheduleResponse>) responseObserver);
          break;
        case METHODID_LIST_SCHEDULES:
          serviceImpl.listSchedules((dev.luosho.v1.ListSchedulesRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ListSchedulesResponse>) responseObserver);
          break;
        case METHODID_PAUSE_SCHEDULE:
          serviceImpl.pauseSchedule((dev.luosho.v1.PauseScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.PauseScheduleResponse>) responseObserver);
          break;
        case METHODID_RESUME_SCHEDULE:
          serviceImpl.resumeSchedule((dev.luosho.v1.ResumeScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.ResumeScheduleResponse>) responseObserver);
          break;
        case METHODID_DELETE_SCHEDULE:
          serviceImpl.deleteSchedule((dev.luosho.v1.DeleteScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.DeleteScheduleResponse>) responseObserver);
          break;
        case METHODID_TRIGGER_SCHEDULE:
          serviceImpl.triggerSchedule((dev.luosho.v1.TriggerScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.luosho.v1.TriggerScheduleResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getExecuteMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.luosho.v1.ExecuteRequest,
              dev.luosho.v1.ExecuteResponse>(
                service, METHODID_EXECUTE)))
        .addMethod(
          getResumeMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.luosho.v1.ResumeRequest,
              dev.luosho.v1.ResumeResponse>(
                service, METHODID_RESUME)))
        .addMethod(
          getSubmitToolResultMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.SubmitToolResultRequest,
              dev.luosho.v1.SubmitToolResultResponse>(
                service, METHODID_SUBMIT_TOOL_RESULT)))
        .addMethod(
          getCancelMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.CancelRequest,
              dev.luosho.v1.CancelResponse>(
                service, METHODID_CANCEL)))
        .addMethod(
          getGetSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.GetSessionRequest,
              dev.luosho.v1.GetSessionResponse>(
                service, METHODID_GET_SESSION)))
        .addMethod(
          getListSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ListSessionsRequest,
              dev.luosho.v1.ListSessionsResponse>(
                service, METHODID_LIST_SESSIONS)))
        .addMethod(
          getDeleteSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.DeleteSessionRequest,
              dev.luosho.v1.DeleteSessionResponse>(
                service, METHODID_DELETE_SESSION)))
        .addMethod(
          getResolveMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.luosho.v1.ResolveRequest,
              dev.luosho.v1.ResolveResponse>(
                service, METHODID_RESOLVE)))
        .addMethod(
          getListApprovalsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ListApprovalsRequest,
              dev.luosho.v1.ListApprovalsResponse>(
                service, METHODID_LIST_APPROVALS)))
        .addMethod(
          getHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.HistoryRequest,
              dev.luosho.v1.HistoryResponse>(
                service, METHODID_HISTORY)))
        .addMethod(
          getForkMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ForkRequest,
              dev.luosho.v1.ForkResponse>(
                service, METHODID_FORK)))
        .addMethod(
          getCompareMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.CompareRequest,
              dev.luosho.v1.CompareResponse>(
                service, METHODID_COMPARE)))
        .addMethod(
          getWatchMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.luosho.v1.WatchRequest,
              dev.luosho.v1.WatchResponse>(
                service, METHODID_WATCH)))
        .addMethod(
          getListMcpServersMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ListMcpServersRequest,
              dev.luosho.v1.ListMcpServersResponse>(
                service, METHODID_LIST_MCP_SERVERS)))
        .addMethod(
          getDequeueInputMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.DequeueInputRequest,
              dev.luosho.v1.DequeueInputResponse>(
                service, METHODID_DEQUEUE_INPUT)))
        .addMethod(
          getCompactMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.CompactRequest,
              dev.luosho.v1.CompactResponse>(
                service, METHODID_COMPACT)))
        .addMethod(
          getCreateScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.CreateScheduleRequest,
              dev.luosho.v1.CreateScheduleResponse>(
                service, METHODID_CREATE_SCHEDULE)))
        .addMethod(
          getListSchedulesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ListSchedulesRequest,
              dev.luosho.v1.ListSchedulesResponse>(
                service, METHODID_LIST_SCHEDULES)))
        .addMethod(
          getPauseScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.PauseScheduleRequest,
              dev.luosho.v1.PauseScheduleResponse>(
                service, METHODID_PAUSE_SCHEDULE)))
        .addMethod(
          getResumeScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.ResumeScheduleRequest,
              dev.luosho.v1.ResumeScheduleResponse>(
                service, METHODID_RESUME_SCHEDULE)))
        .addMethod(
          getDeleteScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.DeleteScheduleRequest,
              dev.luosho.v1.DeleteScheduleResponse>(
                service, METHODID_DELETE_SCHEDULE)))
        .addMethod(
          getTriggerScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.luosho.v1.TriggerScheduleRequest,
              dev.luosho.v1.TriggerScheduleResponse>(
                service, METHODID_TRIGGER_SCHEDULE)))
        .build();
  }

  private static abstract class AgentServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    AgentServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.luosho.v1.AgentProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("AgentService");
    }
  }

  private static final class AgentServiceFileDescriptorSupplier
      extends AgentServiceBaseDescriptorSupplier {
    AgentServiceFileDescriptorSupplier() {}
  }

  private static final class AgentServiceMethodDescriptorSupplier
      extends AgentServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    AgentServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (AgentServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new AgentServiceFileDescriptorSupplier())
              .addMethod(getExecuteMethod())
              .addMethod(getResumeMethod())
              .addMethod(getSubmitToolResultMethod())
              .addMethod(getCancelMethod())
              .addMethod(getGetSessionMethod())
              .addMethod(getListSessionsMethod())
              .addMethod(getDeleteSessionMethod())
              .addMethod(getResolveMethod())
              .addMethod(getListApprovalsMethod())
              .addMethod(getHistoryMethod())
              .addMethod(getForkMethod())
              .addMethod(getCompareMethod())
              .addMethod(getWatchMethod())
              .addMethod(getListMcpServersMethod())
              .addMethod(getDequeueInputMethod())
              .addMethod(getCompactMethod())
              .addMethod(getCreateScheduleMethod())
              .addMethod(getListSchedulesMethod())
              .addMethod(getPauseScheduleMethod())
              .addMethod(getResumeScheduleMethod())
              .addMethod(getDeleteScheduleMethod())
              .addMethod(getTriggerScheduleMethod())
              .build();
        }
      }
    }
    return result;
  }
}
