SELECT t.customer_id AS tier_customer, l.customer_id AS limit_customer, t.tier, l.credit_limit
FROM source('customer_tiers') AS t
JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
