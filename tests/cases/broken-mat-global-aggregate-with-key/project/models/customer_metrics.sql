SELECT
    SUM(amount) AS total_spend
FROM source('orders')
