import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { agentBrief, BRIEF_LIMITS, submitResultSchema } from '../../../shared/capabilities/agent-brief.ts';
import { aCall } from '../../support/capability-call.ts';

const ajv = new Ajv2020({ strict: false });

describe('submitResultSchema', () => {
  it('keeps local references of the output schema resolving after wrapping it', () => {
    const schema = submitResultSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', items: { $ref: '#/$defs/item' } } },
      $defs: { item: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    });
    const validate = ajv.compile(schema);

    expect(validate({ output: { items: [{ n: 1 }] }, confidence: 0.5 })).toBe(true);
    expect(validate({ output: { items: [{ n: 'one' }] }, confidence: 0.5 })).toBe(false);
    expect(validate({ output: { items: [] }, confidence: 1.5 })).toBe(false);
    expect(validate({ output: { items: [] } })).toBe(false);
    expect(validate({ confidence: 0.5 })).toBe(false);
  });

  it('rebases a reference to the root of the output schema (recursive schemas)', () => {
    const schema = submitResultSchema({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      additionalProperties: false,
    });
    const validate = ajv.compile(schema);

    expect(validate({ output: { name: 'a', children: [{ name: 'b', children: [] }] }, confidence: 0 })).toBe(true);
    expect(validate({ output: { name: 'a', children: [{ nope: 1 }] }, confidence: 0 })).toBe(false);
  });

  it('leaves data keywords alone even when they hold a "$ref" key', () => {
    const schema = submitResultSchema({ const: { $ref: '#/x' } });

    expect((schema.properties as { output: unknown }).output).toEqual({ const: { $ref: '#/x' } });
  });
});

describe('agentBrief', () => {
  it('includes the objective, the step, its success criteria, the capability, the input and upstream outputs', () => {
    const brief = agentBrief(
      aCall({
        objective: 'Plan a trip',
        step: {
          title: 'Pick a hotel',
          description: 'Near the station.',
          successCriteria: { description: 'Under 100 EUR' },
        },
        input: { city: 'Lyon' },
        upstreamOutputs: { search: { hotels: ['A', 'B'] } },
      }),
    );

    expect(brief).toMatch(/# Objective of the run\nPlan a trip/);
    expect(brief).toContain('# Your step: Pick a hotel\n\nNear the station.');
    expect(brief).toContain('# Success criteria\nUnder 100 EUR');
    expect(brief).toContain('tool:conformance.echo: Returns its input value unchanged.');
    expect(brief).toContain('"city": "Lyon"');
    expect(brief).toContain('## search');
  });

  it('cuts oversized upstream outputs and says so', () => {
    const huge = 'x'.repeat(BRIEF_LIMITS.upstreamCharsEach * 2);

    const brief = agentBrief(aCall({ upstreamOutputs: { a: huge, b: huge, c: huge, d: huge, e: huge } }));

    expect(brief.length).toBeLessThan(BRIEF_LIMITS.upstreamCharsTotal + BRIEF_LIMITS.inputChars + 5000);
    expect(brief).toContain('more characters cut');
  });
});
