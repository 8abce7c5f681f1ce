/**
 * The built-in identity provider, used when no outside JWT issuer is configured: a Cognito user pool of invited
 * people (no self sign-up), TOTP MFA required, a hosted sign-in domain, and one public client for the console
 * (authorization code + PKCE, no secret). API Gateway's JWT authorizer accepts its access tokens by `client_id`.
 *
 * Roles are groups: `viewer`, `operator`, `approver`, `admin` (an administrator adds people to them). A token
 * trigger (role-scopes.ts) writes a person's role groups into their access token as scopes (`cairn/operator`),
 * which API Gateway checks on each route; the API reads the groups claim too. Other groups are free for an
 * approval's `approvers` to name.
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnUserPoolGroup,
  FeaturePlan,
  LambdaVersion,
  Mfa,
  OAuthScope,
  UserPool,
  type UserPoolClient,
  type UserPoolDomain,
  UserPoolOperation,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { ROLES } from '../../shared/api/contract/roles.ts';
import type { CairnConfig, ConsoleOidcConfig, JwtConfig } from './config.ts';
import { RoleScopesTrigger } from './role-scopes.ts';

export interface CairnUserPoolProps {
  readonly stage: string;
  /** Where the hosted sign-in may send people back to (the console's URL). */
  readonly callbackUrls: readonly string[];
  readonly retain: boolean;
  /** The prefix of role scopes (`cairn/`). */
  readonly scopePrefix: string;
  readonly logRetentionDays: CairnConfig['logRetentionDays'];
}

export class CairnUserPool extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;
  readonly jwt: JwtConfig;
  readonly consoleOidc: ConsoleOidcConfig;
  readonly roleGroups: readonly CfnUserPoolGroup[];
  readonly tokenTrigger: RoleScopesTrigger;

  constructor(scope: Construct, id: string, props: CairnUserPoolProps) {
    super(scope, id);
    this.userPool = new UserPool(this, 'Pool', {
      userPoolName: `cairn-${props.stage}`,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      featurePlan: FeaturePlan.ESSENTIALS,
      deletionProtection: props.retain,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.roleGroups = ROLES.map(
      (role) =>
        new CfnUserPoolGroup(this, `Group-${role}`, {
          userPoolId: this.userPool.userPoolId,
          groupName: role,
          description: `cairn role: ${role}`,
        }),
    );
    this.tokenTrigger = new RoleScopesTrigger(this, 'TokenTrigger', {
      stage: props.stage,
      scopePrefix: props.scopePrefix,
      logRetentionDays: props.logRetentionDays,
    });
    // Version 2 of the event: the only one that can add scopes to an access token (Essentials plan and up).
    this.userPool.addTrigger(
      UserPoolOperation.PRE_TOKEN_GENERATION_CONFIG,
      this.tokenTrigger.function,
      LambdaVersion.V2_0,
    );
    // Domain prefixes are global per region: the account id keeps two accounts' stages apart.
    this.domain = this.userPool.addDomain('Domain', {
      cognitoDomain: { domainPrefix: `cairn-${props.stage}-${Aws.ACCOUNT_ID}` },
    });
    this.client = this.userPool.addClient('Console', {
      generateSecret: false,
      preventUserExistenceErrors: true,
      // SRP for sign-in libraries; admin password auth only for operators holding AWS credentials (scripts, CLI).
      authFlows: { userSrp: true, adminUserPassword: true },
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL],
        callbackUrls: [...props.callbackUrls],
        logoutUrls: [...props.callbackUrls],
      },
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.hours(12),
    });
    this.jwt = { issuer: this.userPool.userPoolProviderUrl, audience: [this.client.userPoolClientId] };
    const base = this.domain.baseUrl();
    this.consoleOidc = {
      authorizeUrl: `${base}/oauth2/authorize`,
      tokenUrl: `${base}/oauth2/token`,
      clientId: this.client.userPoolClientId,
    };
  }
}
