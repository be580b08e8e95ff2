-- Each customer's tier and credit limit, two tables that change, joined on their common
-- key: the join's rows are keyed by it too, so the model is upserted by customer_id.
SELECT t.customer_id, t.tier, l.credit_limit
FROM source('customer_tiers') AS t
JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
