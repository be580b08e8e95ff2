SELECT t.customer_id, t.tier, a.region, a.account_id FROM source('tiers') AS t JOIN source('accounts') AS a ON t.customer_id = a.owner
