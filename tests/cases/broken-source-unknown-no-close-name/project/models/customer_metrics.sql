SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('payments_ledger')
GROUP BY customer_id
