/**
 * cairn's single DynamoDB table. Key names come from the store's table layout, so the deployed table and the
 * embedded dynalite table are built from the same constants.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  GSI1_NAME,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  PARTITION_KEY,
  SORT_KEY,
  STATUS_INDEX_NAME,
  STATUS_PARTITION_KEY,
  STATUS_SORT_KEY,
  TTL_ATTRIBUTE,
} from '../../shared/adapters/aws/table-layout.ts';

export interface CairnTableProps {
  /** Keep the table (and its data) when the stack is deleted or the table replaced. */
  readonly retain: boolean;
}

export class CairnTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: CairnTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The AWS managed key (aws/dynamodb): encrypted at rest with a key visible and audited in the account, at no
      // key cost; a customer managed key would add $1/month and KMS requests for little gain here.
      encryption: TableEncryption.AWS_MANAGED,
      // Idempotency, approval and plan-job records and an ended run's item carry `expiresAt` (the rest of a run goes
      // with its run item: shared/adapters/aws/dynamo-retention.ts); dynalite has no TTL, the embedded runtime sweeps.
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The outbox: each write that announces events is delivered to the relay by the table's change stream; the
      // old image lets the relay tell a new announcement from one an item still carries.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      deletionProtection: props.retain,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: GSI1_NAME,
      partitionKey: { name: GSI1_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: GSI1_SORT_KEY, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    // `GET /runs?status=`: only run items carry its keys, so it holds one entry per run, moved by the write that
    // changes the run's status.
    this.table.addGlobalSecondaryIndex({
      indexName: STATUS_INDEX_NAME,
      partitionKey: { name: STATUS_PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: STATUS_SORT_KEY, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
  }
}
