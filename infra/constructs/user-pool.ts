/**
 * The built-in identity provider, used when no outside JWT issuer is configured: a Cognito user pool of invited
 * people (no self sign-up), TOTP MFA required, a hosted sign-in domain, and one public client for the console
 * (authorization code + PKCE, no secret). API Gateway's JWT authorizer accepts its access tokens by `client_id`.
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  OAuthScope,
  UserPool,
  type UserPoolClient,
  type UserPoolDomain,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import type { ConsoleOidcConfig, JwtConfig } from './config.ts';

export interface CairnUserPoolProps {
  readonly stage: string;
  /** Where the hosted sign-in may send people back to (the console's URL). */
  readonly callbackUrls: readonly string[];
  readonly retain: boolean;
}

export class CairnUserPool extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;
  readonly jwt: JwtConfig;
  readonly consoleOidc: ConsoleOidcConfig;

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
